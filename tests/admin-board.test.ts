import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './helpers/browser.js';
import { startInProcessApi, type InProcessApi, oneShard } from './helpers/service.js';

// This file names the queues as one shard shows them.
oneShard();

const ADMIN_KEY = 'admin-key-0123456789abcdef';

describe('queue dashboard (bull-board) at /admin/queues', () => {
  let api: InProcessApi;
  beforeAll(async () => {
    api = await startInProcessApi({ adminKeys: [ADMIN_KEY] });
    for (let i = 0; i < 3; i++)
      await api.http('POST', '/v1/jobs', { body: { type: 'echo', input: { i } } });
    await api.http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 10 } } });
  });
  afterAll(() => api?.close());

  it('asks for the admin key; tenant keys do not open it', async () => {
    const none = await api.http('GET', '/admin/queues', { key: null });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await api.http('GET', '/admin/queues')).status).toBe(401); // tenant key
    expect((await api.http('GET', '/admin/queues', { key: ADMIN_KEY })).status).toBe(200);
  });

  it('is read-only by default', async () => {
    const res = await api.http('GET', '/admin/queues/api/queues', { key: ADMIN_KEY });
    expect(res.status).toBe(200);
    const tasks = res.body.queues.find((q: { name: string }) => q.name === 'tasks.echo');
    expect(tasks.readOnlyMode).toBe(true);
    // Under fair share (the default) jobs wait in BullMQ's prioritized set.
    expect(tasks.counts.waiting + tasks.counts.prioritized).toBe(3);
  });

  it('serves a page that loads nothing from outside this origin (it works offline)', async () => {
    const page = await api.http('GET', '/admin/queues', { key: ADMIN_KEY });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<div id="root">');
    // No absolute URL in a link, script or style (bull-board's own page links Google Fonts).
    expect(page.text).not.toMatch(/<(link|script|img)[^>]+(href|src)="(https?:)?\/\//i);
    expect(page.text).not.toContain('fonts.googleapis.com');
  });

  it('is not mounted without admin keys', async () => {
    const plain = await startInProcessApi();
    try {
      expect((await plain.http('GET', '/admin/queues', { key: ADMIN_KEY })).status).toBe(404);
    } finally {
      await plain.close();
    }
  });

  describe.skipIf(!hasChromium)('in headless Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    }, 60_000);
    afterAll(() => browser?.close());

    it('loads and shows the queues with their counts', async () => {
      const context = await browser.newContext({
        httpCredentials: { username: 'ops', password: ADMIN_KEY },
      });
      const page = await context.newPage();
      const outside: string[] = [];
      const fonts: string[] = [];
      page.on('request', (r) => {
        if (r.resourceType() === 'font') fonts.push(r.url());
      });
      await page.route('**/*', (route) => {
        const host = new URL(route.request().url()).hostname;
        if (host === '127.0.0.1') return route.continue();
        outside.push(route.request().url());
        return route.abort();
      });
      // The page runs under the dashboard's CSP (issue 27): nothing of its own may be blocked.
      const blocked: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
      });
      const doc = await page.goto(`${api.url}/admin/queues`);
      expect(doc?.headers()['content-security-policy']).toMatch(/default-src 'self'/);
      // No web font, from anywhere (issue 30): the system's typefaces.
      expect(doc?.headers()['content-security-policy']).toContain("font-src 'none'");
      expect(doc?.headers()['x-frame-options']).toBe('DENY');
      await page.getByText('tasks-slow').first().waitFor({ timeout: 20_000 });
      await page.waitForLoadState('networkidle');
      await page.getByText('Loading...').waitFor({ state: 'detached', timeout: 20_000 });
      const text = await page.locator('body').innerText();
      expect(text).toContain('tasks.echo');
      expect(text).toContain('webhooks');
      // 3 echo + 1 sleep in all, in BullMQ's prioritized set under fair share (the default).
      expect(text).toMatch(/PRIORITIZED\s+4\b/);
      expect(text).toMatch(/tasks\.echo\s+No workers\s+3 Jobs/);
      expect(text).toMatch(/tasks-slow\s+No workers\s+1 Job/);
      const png = await page.screenshot({ fullPage: true });
      expect(png.length).toBeGreaterThan(10_000);
      // Nothing may leave the machine (the route handler aborted every outside request): the
      // page works offline, its fonts the system's (issue 27).
      expect(outside).toEqual([]);
      expect(fonts).toEqual([]);
      // Nor may the CSP have had anything to refuse: the page links nothing outside.
      expect(blocked).toEqual([]);
      await context.close();
    }, 60_000);
  });
});
