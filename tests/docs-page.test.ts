import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './helpers/browser.js';
import { startInProcessApi, type InProcessApi } from './helpers/service.js';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Width and height from a PNG's IHDR chunk; throws if `png` is not a PNG. */
function pngSize(png: Buffer): { width: number; height: number } {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (!png.subarray(0, 8).equals(signature) || png.toString('latin1', 12, 16) !== 'IHDR') {
    throw new Error('not a PNG');
  }
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

// Debian's `chromium` package; `.ci/run` installs it.
describe.skipIf(!hasChromium)('GET /docs in a real browser', () => {
  let api: InProcessApi;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    api = await startInProcessApi();
    dir = await mkdtemp(join(tmpdir(), 'longrun-docs-'));
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is served without a key, under a self-only CSP', async () => {
    const res = await api.http('GET', '/docs', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-|https?:|\*/);
    // Only the files the page needs are served from swagger-ui-dist (not its demo index.html).
    expect((await api.http('GET', '/docs/assets/swagger-ui-bundle.js', { key: null })).status).toBe(
      200,
    );
    expect((await api.http('GET', '/docs/assets/index.html', { key: null })).status).toBe(404);
  });

  it('renders every operation, offline, and screenshots well', { timeout: 90_000 }, async () => {
    const doc = (await api.http('GET', '/openapi.json', { key: null })).body;
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, item]) =>
        ['get', 'post', 'put', 'patch', 'delete']
          .filter((m) => item[m])
          .map((m) => `${m.toUpperCase()} ${path}`),
      )
      .sort();

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const requested: string[] = [];
    const blocked: string[] = [];
    const problems: string[] = [];
    // Anything but loopback is refused before it leaves the browser, and counted.
    await context.route('**/*', async (route) => {
      const url = new URL(route.request().url());
      requested.push(url.href);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.has(url.hostname)) {
        await route.continue();
      } else {
        blocked.push(url.href);
        await route.abort('blockedbyclient');
      }
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    // Violations are reported even when the page recovers from them: make them console errors.
    await page.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (e) =>
        console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));`,
    });

    const response = await page.goto(`${api.url}/docs`);
    expect(response?.status()).toBe(200);
    // A locator, not waitForFunction: a string predicate is eval'd in the page, which this page's
    // CSP (script-src 'self') rightly refuses.
    await page
      .locator('.opblock-summary-path')
      .nth(operations.length - 1)
      .waitFor({ state: 'attached', timeout: 30_000 });
    await page.waitForLoadState('networkidle');

    const rendered = await page.$$eval('.opblock', (blocks) =>
      blocks.map((block) => {
        const method = block.querySelector('.opblock-summary-method')?.textContent ?? '';
        const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
        return `${method.trim().toUpperCase()} ${path}`;
      }),
    );
    // Webhooks render as operations too; every documented operation must be on the page.
    for (const operation of operations) expect(rendered).toContain(operation);

    // Swagger UI puts zero-width spaces before each '/' in paths so they can wrap.
    const text = (await page.innerText('body')).replaceAll('\u200b', '');
    for (const route of ['/v1/jobs', '/v1/jobs/{id}/cancel', '/v1/jobs/{id}/events', '/healthz']) {
      expect(text).toContain(route);
    }
    expect(text).toContain('task.updated');
    expect(text).toContain('longrun');

    // Opening an operation renders its schemas, headers and problem responses.
    await page.click('#operations-tasks-submitJob .opblock-summary-control');
    await page.waitForSelector('#operations-tasks-submitJob .responses-table');
    const submit = (await page.innerText('#operations-tasks-submitJob')).replaceAll('\u200b', '');
    for (const expected of ['Idempotency-Key', 'Location', 'Idempotent-Replayed', 'Callbacks']) {
      expect(submit).toContain(expected);
    }
    for (const status of ['202', '400', '401', '409', '413', '415', '422', '503']) {
      expect(submit).toContain(status);
    }
    expect(submit).toContain('application/problem+json');

    const file = join(dir, 'docs.png');
    await page.screenshot({ path: file, fullPage: true });
    const png = await readFile(file);
    const { width, height } = pngSize(png);
    expect(width).toBe(1280);
    expect(height).toBeGreaterThan(900);
    expect(png.length).toBeGreaterThan(100_000); // a blank page of that size compresses to far less
    // To look at it: LONGRUN_KEEP_SCREENSHOT=/tmp/docs.png npx vitest run tests/docs-page.test.ts
    const keep = process.env.LONGRUN_KEEP_SCREENSHOT;
    if (keep) await copyFile(file, keep);

    expect(problems).toEqual([]);
    expect(blocked).toEqual([]);
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.every((u) => new URL(u).origin === api.url)).toBe(true);
    await context.close();
  });
});
