import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpClient } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A, uniquePrefix } from './helpers/service.js';

// Issue 41, item 4: registrations are bounded, per worker key (LONGRUN_WORKER_MAX_TYPES) and per
// schema (64 KiB). The real API process.

const W1_KEY = 'w1-caps-key-0123456789';
const W2_KEY = 'w2-caps-key-0123456789';
const MAX = 3;
let api: Proc;
let w1: ReturnType<typeof httpClient>;
let w2: ReturnType<typeof httpClient>;
let tenant: ReturnType<typeof httpClient>;

const put = (as: typeof w1, name: string, inputSchema: unknown = { type: 'object' }) =>
  as('PUT', `/v1/worker/job-types/${name}`, { body: { inputSchema } });

beforeAll(async () => {
  api = await startApp('api', {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: uniquePrefix(),
    LONGRUN_API_KEYS: API_KEYS,
    LONGRUN_WORKER_KEYS: `w1:${W1_KEY},w2:${W2_KEY}`,
    LONGRUN_WORKER_MAX_TYPES: String(MAX),
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const base = `http://127.0.0.1:${api.ready.port as number}`;
  w1 = httpClient(base, W1_KEY);
  w2 = httpClient(base, W2_KEY);
  tenant = httpClient(base, KEY_A);
}, 30_000);

afterAll(() => api?.stop());

describe('bounded registrations (issue 41, item 4)', () => {
  it('a worker key owns at most LONGRUN_WORKER_MAX_TYPES types (409 too-many-job-types)', async () => {
    for (let i = 0; i < MAX; i++) expect((await put(w1, `capped-${i}`)).status).toBe(200);
    const over = await put(w1, 'capped-over');
    expect(over.status, over.text).toBe(409);
    expect(over.body.type).toBe('/problems/too-many-job-types');
    // Its own types re-register as before; another key has its own count.
    expect((await put(w1, 'capped-0', { type: 'object', required: ['x'] })).status).toBe(200);
    expect((await put(w2, 'other-0')).status).toBe(200);
    // Removing one makes room.
    expect((await w1('DELETE', '/v1/worker/job-types/capped-1')).status).toBe(204);
    expect((await put(w1, 'capped-over')).status).toBe(200);
    const names = ((await tenant('GET', '/v1/job-types')).body.jobTypes as { name: string }[]).map(
      (t) => t.name,
    );
    expect(names.filter((n) => n.startsWith('capped-')).sort()).toEqual([
      'capped-0',
      'capped-2',
      'capped-over',
    ]);
  });

  it('an input schema over 64 KiB of JSON is refused with 413 schema-too-large', async () => {
    const big = { type: 'object', description: 'x'.repeat(64 * 1024) };
    const res = await put(w2, 'big-schema', big);
    expect(res.status).toBe(413);
    expect(res.body.type).toBe('/problems/schema-too-large');
    const names = ((await tenant('GET', '/v1/job-types')).body.jobTypes as { name: string }[]).map(
      (t) => t.name,
    );
    expect(names).not.toContain('big-schema');
    const fits = { type: 'object', description: 'x'.repeat(60 * 1024) };
    expect((await put(w2, 'fits-schema', fits)).status).toBe(200);
  });
});
