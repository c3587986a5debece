// The task console (issue 30): served by the API at /console, driven in headless Chromium against
// the real API and real worker processes: sign-in, a filtered list, answering a question's form
// with a bad then a good value (the page's message is the API's), cancel, a task finishing live.
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { hasChromium, launchChromium } from './helpers/browser.js';
import { waitFor } from './helpers/http.js';
import { startScript, type Proc } from './helpers/processes.js';
import { KEY_A, startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

// The page's globals these checks read in the browser (the tests type-check without the DOM lib).
declare const document: {
  activeElement: unknown;
  cookie: string;
  documentElement: { scrollWidth: number };
};
declare const sessionStorage: {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
};
declare const window: { marker?: number };

const root = resolve(import.meta.dirname, '..');
let api: InProcessApi;
let worker: Proc;
let reviewer: Proc;

beforeAll(async () => {
  api = await startInProcessApi();
  worker = await startWorker(api.prefix);
  reviewer = await startScript(
    'tests/fixtures/console-worker.mjs',
    { REDIS_URL: inject('redisUrl'), LONGRUN_PREFIX: api.prefix },
    { cwd: root, timeoutMs: 20_000 },
  );
}, 60_000);
afterAll(async () => {
  await reviewer?.stop();
  await worker?.stop();
  await api?.close();
});

async function submit(body: Record<string, unknown>): Promise<string> {
  const res = await api.http('POST', '/v1/jobs', { body });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

/** Opens a task's page and waits until it shows that task (not the page before it). */
async function openTask(page: Page, id: string): Promise<void> {
  await page.goto(`${api.url}/console/#/task/${id}`);
  await page.locator('[data-fact="Task id"]', { hasText: id }).waitFor();
}

/** Whether a located element has the focus (runs in the page). */
const FOCUSED = (el: unknown) => el === document.activeElement;

const statusOf = async (id: string) => (await api.http('GET', `/v1/jobs/${id}`)).body.status;

describe('GET /console', () => {
  it('serves the page and its modules with a strict CSP, from this origin only', async () => {
    const page = await fetch(`${api.url}/console/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const rule of [
      "default-src 'none'",
      "script-src 'self'",
      "font-src 'none'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(rule);
    }
    const html = await page.text();
    expect(html).toContain('<script type="module" src="app.js"></script>');
    // No absolute URL anywhere in the page: no CDN, no web font.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//i);
    const script = await fetch(`${api.url}/console/app.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    const redirect = await fetch(`${api.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/console/');
    expect((await fetch(`${api.url}/console/../package.json`)).status).toBe(404);
    expect((await fetch(`${api.url}/console/nope.js`)).status).toBe(404);
    // The site's icon, where browsers ask first (issue 41, item 10: it was a 404).
    const icon = await fetch(`${api.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(await icon.text()).toContain('<svg');
  });
});

describe.skipIf(!hasChromium)('the console in headless Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const outside: string[] = [];
  const blocked: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    // Phone width first: the whole flow is done on a 390 px wide screen.
    context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    // Every tab of the context: the hostile questions' tabs too.
    await context.route('**/*', (route) => {
      if (new URL(route.request().url()).hostname === '127.0.0.1') return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    context.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
    page = await context.newPage();
  }, 60_000);
  afterAll(() => browser?.close());

  it('signs in with the key, kept in sessionStorage only', async () => {
    await page.goto(`${api.url}/console/`);
    const key = page.getByLabel('API key');
    await expect.poll(() => key.evaluate(FOCUSED)).toBe(true);
    // Nobody is signed in yet: no "Sign out" (issue 41, item 10).
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(false);
    await key.fill('not-a-key-of-this-api-000');
    await key.press('Enter');
    await page.getByText('The API did not accept this key.').waitFor();
    await key.fill(KEY_A);
    await key.press('Enter');
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('longrun.console.key'))).toBe(KEY_A);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(page.url()).not.toContain(KEY_A);
  });

  it('lists tasks filtered by tag, type and status', async () => {
    const [a, b] = [
      await submit({ type: 'echo', input: { n: 1 }, tags: ['nightly', 'batch-7'] }),
      await submit({ type: 'echo', input: { n: 2 }, tags: ['nightly'] }),
    ];
    await submit({ type: 'echo', input: { n: 3 }, tags: ['other'] });
    const pending = await submit({ type: 'sleep', input: { ms: 60_000 }, tags: ['nightly'] });
    await waitFor(async () => ((await statusOf(b)) === 'completed' ? true : undefined), {
      what: 'the echo tasks completed',
    });
    await page.getByLabel('Tag').fill('nightly');
    await page.getByLabel('Type').fill('echo');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const rows = page.locator('tr[data-task-id]');
    await expect
      .poll(
        async () =>
          new Set(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-task-id')))),
      )
      .toEqual(new Set([a, b]));
    expect(page.url()).toContain('tag=nightly');
    expect(await page.locator(`tr[data-task-id="${a}"]`).innerText()).toContain('batch-7');
    // The status filter on top: only the unfinished sleep carries the tag and is working.
    await page.getByLabel('Type').fill('');
    await page.getByLabel('Status').selectOption('working');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect
      .poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-task-id'))))
      .toEqual([pending]);
    // Pages of 20, by the API's cursor.
    const many = Array.from({ length: 21 }, (_, i) => ({
      type: 'echo',
      input: { i },
      tags: ['many'],
    }));
    expect((await api.http('POST', '/v1/jobs/batch', { body: { tasks: many } })).status).toBe(207);
    await page.goto(`${api.url}/console/#/?tag=many`);
    await expect.poll(() => rows.count()).toBe(20);
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByRole('link', { name: 'First page' }).click();
    await expect.poll(() => rows.count()).toBe(20);
    await page.goto(`${api.url}/console/#/?tag=nightly&status=working`);
    await expect.poll(() => rows.count()).toBe(1);
    // Usable at phone width: nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await api.http('POST', `/v1/jobs/${pending}/cancel`);
  });

  it("answers a question: a bad value gets the API's own message, a good one completes the task", async () => {
    const id = await submit({ type: 'review', input: { title: 'release 7' }, tags: ['approval'] });
    await waitFor(async () => ((await statusOf(id)) === 'input_required' ? true : undefined), {
      what: 'the review asked its question',
    });
    await openTask(page, id);
    await page.locator('.question', { hasText: 'Approve "release 7"?' }).waitFor();
    // Every control of the generated form has a label.
    const unlabelled = await page
      .locator('form.answer')
      .evaluate(
        (form) =>
          [...form.querySelectorAll('input, select, textarea')].filter(
            (el) => (el as unknown as { labels: unknown[] }).labels.length === 0,
          ).length,
      );
    expect(unlabelled).toBe(0);
    await page.getByLabel('approved').check();
    const amount = page.getByLabel('amount');
    await amount.fill('5000');
    await page.getByLabel('reviewer').fill('ana@example.com');
    await page.getByLabel('decision').selectOption('ship');
    await page.getByLabel('city').fill('Oslo');
    await page.getByRole('button', { name: 'Add notes item' }).click();
    await page.getByLabel('Item 1').fill('looks good');
    await page.getByRole('button', { name: 'Send answer' }).click();
    const error = page.locator('[data-path="input.amount"] .field-error');
    await error.waitFor();
    const shown = (await error.innerText()).trim();
    // The same answer sent to the API: its 422 says the same words for the same field.
    const bad = {
      approved: true,
      amount: 5000,
      reviewer: 'ana@example.com',
      decision: 'ship',
      address: { city: 'Oslo' },
      notes: ['looks good'],
    };
    const refused = await api.http('POST', `/v1/jobs/${id}/input`, { body: { input: bad } });
    expect(refused.status).toBe(422);
    const said = (refused.body.errors as { path: string; message: string }[]).find(
      (e) => e.path === 'input.amount',
    );
    expect(said?.message).toBe('must be <= 1000');
    expect(shown).toBe(said?.message);
    expect(await amount.getAttribute('aria-invalid')).toBe('true');
    // The focus went to the field to fix.
    expect(await amount.evaluate(FOCUSED)).toBe(true);
    expect(await statusOf(id)).toBe('input_required');
    await amount.fill('250');
    await page.getByRole('button', { name: 'Send answer' }).click();
    await page.locator('[data-fact="Status"] .s-completed').waitFor({ timeout: 20_000 });
    const result = await page.locator('pre[aria-label="Result"]').innerText();
    expect(JSON.parse(result)).toMatchObject({
      title: 'release 7',
      approved: true,
      amount: 250,
      notes: ['looks good'],
    });
    expect((await api.http('GET', `/v1/jobs/${id}`)).body.result).toMatchObject({ amount: 250 });
  }, 60_000);

  it('cancels a running task from its page, with the keyboard', async () => {
    const id = await submit({ type: 'sleep', input: { ms: 60_000 } });
    await openTask(page, id);
    const cancel = page.getByRole('button', { name: 'Cancel task' });
    await cancel.focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-fact="Status"] .s-cancelled').waitFor();
    expect(await statusOf(id)).toBe('cancelled');
    // A finished task offers delete and replay instead.
    await page.getByRole('button', { name: 'Delete' }).waitFor();
  }, 60_000);

  it('shows a task finishing live, without a reload', async () => {
    const id = await submit({ type: 'sleep', input: { ms: 2500 } });
    await openTask(page, id);
    await page.locator('[data-fact="Status"] .s-working').waitFor();
    await page.evaluate(() => (window.marker = 1));
    await page.locator('[data-fact="Status"] .s-completed').waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => window.marker)).toBe(1);
    // The timeline has the task's events, the last the completion.
    const events = await page.locator('.timeline li').allInnerTexts();
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)).toContain('completed');
    // A row of the list changes live too.
    const listed = await submit({ type: 'sleep', input: { ms: 2500 }, tags: ['live-list'] });
    await page.goto(`${api.url}/console/#/?tag=live-list`);
    const row = page.locator(`tr[data-task-id="${listed}"]`);
    await row.locator('.s-working').waitFor();
    await row.locator('.s-completed').waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => window.marker)).toBe(1);
    if (process.env.LONGRUN_CONSOLE_SCREENSHOT) {
      await page.setViewportSize({ width: 1100, height: 760 });
      await page.goto(`${api.url}/console/#/?tag=nightly`);
      await page.locator('tr[data-task-id]').first().waitFor();
      await writeFile(process.env.LONGRUN_CONSOLE_SCREENSHOT, await page.screenshot());
    }
  });

  it('keeps every unfinished task of the list current, past the streams a page keeps open', async () => {
    // Six unfinished rows: four followed over their event streams (a browser's six connections a
    // host), the rest polled at the interval their handles ask. All six finish on screen.
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(await submit({ type: 'sleep', input: { ms: 3000 }, tags: ['live-many'] }));
    }
    await page.goto(`${api.url}/console/#/?tag=live-many`);
    await page.locator('tr[data-task-id]').nth(5).waitFor();
    await page.evaluate(() => (window.marker = 2));
    for (const id of ids) {
      await page.locator(`tr[data-task-id="${id}"] .s-completed`).waitFor({ timeout: 20_000 });
    }
    expect(await page.evaluate(() => window.marker)).toBe(2);
    expect(await page.getByText('not followed live').count()).toBe(0);
  });

  it("shows a durable task's steps and child tasks, each child a link to its page", async () => {
    const id = await submit({ type: 'durable', input: { steps: 2, children: 2 } });
    await waitFor(async () => (await statusOf(id)) === 'completed', { timeoutMs: 30_000 });
    const handle = (await api.http('GET', `/v1/jobs/${id}`)).body as {
      childTaskIds: string[];
      steps: { name: string }[];
    };
    expect(handle.childTaskIds).toHaveLength(2);
    await openTask(page, id);
    const steps = await page.locator('[data-fact="Steps"] li code').allInnerTexts();
    expect(steps).toEqual(handle.steps.map((s) => s.name));
    // Each step's time as a time, not "[object HTMLTimeElement]" (issue 41, item 10).
    const lines = await page.locator('[data-fact="Steps"] li').allInnerTexts();
    for (const line of lines) expect(line).not.toContain('[object');
    expect(await page.locator('[data-fact="Steps"] li time').count()).toBe(lines.length);
    expect(steps).toEqual(expect.arrayContaining(['s1', 's2', 'last']));
    const children = page.locator('[data-fact="Child tasks"] li a');
    expect(await children.allInnerTexts()).toEqual(handle.childTaskIds);
    await children.first().click();
    await page.locator('[data-fact="Task id"]', { hasText: handle.childTaskIds[0]! }).waitFor();
    const parent = await page.locator('[data-fact="Parent task"] a').innerText();
    expect(parent).toBe(id);
  }, 60_000);

  describe('a hostile question (issue 41, item 9)', () => {
    // Each in a tab of its own, signed in already: a tab the schema froze fails its own test only.
    // The page's bounds (apps/api/console/form.js): at most 100 controls, groups 4 deep.
    let tab: Page;
    const RESPONSIVE_MS = 5_000;

    async function ask(kind: 'many' | 'pattern' | 'deep' | 'wide'): Promise<string> {
      const id = await submit({ type: 'hostile', input: { kind } });
      await waitFor(async () => ((await statusOf(id)) === 'input_required' ? true : undefined), {
        what: `the ${kind} question`,
      });
      tab = await context.newPage();
      await tab.addInitScript((key) => sessionStorage.setItem('longrun.console.key', key), KEY_A);
      await tab.goto(`${api.url}/console/#/task/${id}`, { timeout: RESPONSIVE_MS });
      // The form is on screen within the bound, and is a bounded form.
      await tab.locator('form.answer button[type="submit"]').waitFor({ timeout: RESPONSIVE_MS });
      await responsive();
      const shape = await tab.locator('form.answer').evaluate((form) => ({
        controls: form.querySelectorAll('input, select, textarea').length,
        depth: Math.max(
          0,
          ...[...form.querySelectorAll('fieldset')].map((f) => {
            let n = 0;
            for (let e = f.parentElement; e; e = e.parentElement) if (e.tagName === 'FIELDSET') n++;
            return n;
          }),
        ),
      }));
      expect(shape.controls).toBeLessThanOrEqual(100);
      expect(shape.depth).toBeLessThanOrEqual(4);
      return id;
    }

    /** The tab's main thread answers within the bound (a page stuck in a loop never does). */
    async function responsive(): Promise<void> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the tab did not answer within ${RESPONSIVE_MS} ms`)),
          RESPONSIVE_MS,
        );
      });
      try {
        expect(await Promise.race([tab.evaluate(() => 1), stuck])).toBe(1);
      } finally {
        clearTimeout(timer);
      }
    }

    const send = () =>
      tab.getByRole('button', { name: 'Send answer' }).click({ timeout: RESPONSIVE_MS });
    const errorAt = (path: string) => tab.locator(`[data-path="${path}"] .field-error`);
    /** The API's own words for `answer`, to compare with what the page shows. */
    async function apiSays(id: string, answer: unknown, path: string): Promise<string> {
      const refused = await api.http('POST', `/v1/jobs/${id}/input`, { body: { input: answer } });
      expect(refused.status).toBe(422);
      const errors = refused.body.errors as { path: string; message: string }[];
      return errors.find((e) => e.path === path)?.message ?? JSON.stringify(errors);
    }
    async function completes(id: string): Promise<void> {
      await tab.locator('[data-fact="Status"] .s-completed').waitFor({ timeout: 20_000 });
      expect(await statusOf(id)).toBe('completed');
    }
    afterEach(() => tab?.close());

    it('a list of at least 10⁸ items is a JSON text area, and the rest of the form works', async () => {
      const id = await ask('many');
      const items = tab.locator('[data-path="input.items"] textarea');
      await items.fill('["one"]');
      await tab.getByLabel('note').fill('hello');
      await send();
      await errorAt('input.items').waitFor({ timeout: RESPONSIVE_MS });
      expect((await errorAt('input.items').innerText()).trim()).toBe(
        await apiSays(id, { items: ['one'], note: 'hello' }, 'input.items'),
      );
      await items.fill('');
      await send();
      await completes(id);
    }, 60_000);

    it('a pattern that backtracks for ever is left to the API, whose message is shown', async () => {
      const id = await ask('pattern');
      const code = tab.getByLabel('code');
      await code.fill(`${'a'.repeat(34)}!`);
      await send();
      await responsive();
      await errorAt('input.code').waitFor({ timeout: RESPONSIVE_MS });
      await responsive();
      expect((await errorAt('input.code').innerText()).trim()).toBe('must match pattern "^(a+)+$"');
      await code.fill('aaa');
      await send();
      await completes(id);
      expect((await api.http('GET', `/v1/jobs/${id}`)).body.result).toEqual({
        kind: 'pattern',
        answer: { code: 'aaa' },
      });
    }, 60_000);

    it('an object 30 levels deep is typed as JSON past the depth the page draws', async () => {
      const id = await ask('deep');
      const area = tab.locator('form.answer textarea');
      expect(await area.count()).toBe(1);
      const path =
        (await area.evaluate((el) => el.closest('[data-path]')?.getAttribute('data-path'))) ?? '';
      // What is left below the text area's path: input.a.a… down to { leaf }.
      const above = path.split('.').length - 1;
      let rest: unknown = { leaf: 'bottom' };
      for (let i = 0; i < 30 - above; i++) rest = { a: rest };
      await area.fill('{}');
      await send();
      await errorAt(path).waitFor({ timeout: RESPONSIVE_MS });
      expect((await errorAt(path).innerText()).trim()).toBe("must have required property 'a'");
      await area.fill(JSON.stringify(rest));
      await send();
      await completes(id);
    }, 60_000);

    it('400 fields are one JSON text area, not 400 controls', async () => {
      const id = await ask('wide');
      const area = tab.locator('form.answer textarea');
      await area.fill('{"f1": "x"}');
      await send();
      await tab.locator('.error-summary').waitFor({ timeout: RESPONSIVE_MS });
      expect(await tab.locator('.error-summary').innerText()).toContain(
        "must have required property 'f0'",
      );
      await area.fill('{"f0": "first", "f399": "last"}');
      await send();
      await completes(id);
    }, 60_000);
  });

  it('loaded nothing from outside and broke no CSP rule', () => {
    expect(outside).toEqual([]);
    expect(blocked).toEqual([]);
  });
});
