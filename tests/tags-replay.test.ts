// Tags, search and replay (issue 30): submits carry up to 10 tags, GET /v1/jobs?tag= reads the
// tag's own index (a page costs the same however many other tasks the tenant has), and
// POST /v1/jobs/{id}/replay and POST /v1/jobs/replay submit tasks again, naming the original.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedis, taskKeys } from '@longrun/engine/internal';
import { httpClient, waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { KEY_B, startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

let api: InProcessApi;
let redis: Redis;

beforeAll(async () => {
  api = await startInProcessApi();
  redis = createRedis(inject('redisUrl'), 'producer');
});
afterAll(async () => {
  redis?.disconnect();
  await api?.close();
});

async function submit(body: Record<string, unknown>, key?: string): Promise<string> {
  const res = await api.http('POST', '/v1/jobs', { body, ...(key ? { key } : {}) });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

const ids = (res: { body: { tasks: { taskId: string }[] } }) => res.body.tasks.map((t) => t.taskId);

describe('tags on a submit', () => {
  it('are stored with the task and shown in its handle, its poll and the list', async () => {
    const res = await api.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { a: 1 }, tags: ['nightly', 'customer:42', 'ünïcode ✓'] },
    });
    expect(res.status).toBe(202);
    expect(res.body.tags).toEqual(['nightly', 'customer:42', 'ünïcode ✓']);
    const id = res.body.taskId as string;
    expect((await api.http('GET', `/v1/jobs/${id}`)).body.tags).toEqual(res.body.tags);
    const listed = await api.http('GET', '/v1/jobs?tag=customer:42');
    expect(listed.body.tasks).toHaveLength(1);
    expect(listed.body.tasks[0]).toMatchObject({ taskId: id, tags: res.body.tags });
    // A task without tags shows none.
    const plain = await api.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } });
    expect(plain.body).not.toHaveProperty('tags');
  });

  it.each([
    ['more than 10', Array.from({ length: 11 }, (_, i) => `t${i}`), 'tags'],
    ['a tag over 64 characters', ['x'.repeat(65)], 'tags.0'],
    ['an empty tag', ['ok', ''], 'tags.1'],
    ['a repeated tag', ['a', 'a'], 'tags'],
    ['a control character', ['line\nbreak'], 'tags.0'],
    ['not a list', 'nightly', 'tags'],
    ['not strings', [1, 2], 'tags.0'],
  ])('refuses %s with a 400 problem naming the field', async (_what, tags, path) => {
    const res = await api.http('POST', '/v1/jobs', { body: { type: 'echo', input: {}, tags } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('takes 10 tags of 64 characters', async () => {
    const tags = Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(64, 'x'));
    const res = await api.http('POST', '/v1/jobs', { body: { type: 'echo', input: {}, tags } });
    expect(res.status, res.text).toBe(202);
    expect(res.body.tags).toEqual(tags);
  });
});

describe('GET /v1/jobs?tag=', () => {
  it("pages through one tag's tasks, newest first, with the other filters on top", async () => {
    const tagged: string[] = [];
    for (let i = 0; i < 5; i++) {
      tagged.unshift(await submit({ type: 'echo', input: { i }, tags: ['paged', `n${i}`] }));
      await submit({ type: 'echo', input: { i }, tags: ['unrelated'] });
      await submit({ type: 'sleep', input: { ms: 10 }, tags: ['paged-not'] });
    }
    const sleeper = await submit({ type: 'sleep', input: { ms: 10 }, tags: ['paged'] });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await api.http(
        'GET',
        `/v1/jobs?tag=paged&type=echo&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status, res.text).toBe(200);
      seen.push(...ids(res));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(tagged);
    expect(ids(await api.http('GET', '/v1/jobs?tag=paged&type=sleep'))).toEqual([sleeper]);
    expect(ids(await api.http('GET', '/v1/jobs?tag=n3'))).toEqual([tagged[1]]);
    expect(ids(await api.http('GET', '/v1/jobs?tag=no-such-tag'))).toEqual([]);
  });

  it("reads the tag's own index: a tagged task behind 1 100 others is on the first page", async () => {
    const own = await startInProcessApi();
    try {
      const old = (
        await own.http('POST', '/v1/jobs', {
          body: { type: 'echo', input: {}, tags: ['needle'] },
        })
      ).body.taskId as string;
      for (let b = 0; b < 11; b++) {
        const tasks = Array.from({ length: 100 }, (_, i) => ({ type: 'echo', input: { b, i } }));
        expect((await own.http('POST', '/v1/jobs/batch', { body: { tasks } })).status).toBe(207);
      }
      // A status filter walks the tenant's index, at most 1 000 entries a request: it stops
      // short of the old task. The tag walks only its own.
      const byStatus = await own.http('GET', '/v1/jobs?status=working&type=nope&limit=1');
      expect(byStatus.body.tasks).toEqual([]);
      expect(byStatus.body.nextCursor).not.toBeNull();
      const byTag = await own.http('GET', '/v1/jobs?tag=needle&limit=1');
      expect(ids(byTag)).toEqual([old]);
      // A full page names a cursor; the tag has nothing past it.
      if (byTag.body.nextCursor) {
        const rest = await own.http('GET', `/v1/jobs?tag=needle&cursor=${byTag.body.nextCursor}`);
        expect(rest.body).toEqual({ tasks: [], nextCursor: null });
      }
    } finally {
      await own.close();
    }
  }, 60_000);

  it("never shows another tenant's tasks of the same tag", async () => {
    const mine = await submit({ type: 'echo', input: {}, tags: ['shared-tag'] });
    const theirs = await submit({ type: 'echo', input: {}, tags: ['shared-tag'] }, KEY_B);
    expect(ids(await api.http('GET', '/v1/jobs?tag=shared-tag'))).toEqual([mine]);
    const other = httpClient(api.url, KEY_B);
    expect(ids(await other('GET', '/v1/jobs?tag=shared-tag'))).toEqual([theirs]);
  });

  it.each([['tag='], [`tag=${'y'.repeat(65)}`], ['tag=a%00b']])(
    'refuses %s with a 400 problem',
    async (query) => {
      const res = await api.http('GET', `/v1/jobs?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe('tag');
    },
  );

  it("a deleted task leaves its tags' indexes at once", async () => {
    const id = await submit({ type: 'sleep', input: { ms: 60_000 }, tags: ['gone-soon', 'two'] });
    const keys = taskKeys(api.prefix);
    expect(await redis.zcard(keys.tagIndex('alpha', 'gone-soon'))).toBe(1);
    await api.http('POST', `/v1/jobs/${id}/cancel`);
    expect((await api.http('DELETE', `/v1/jobs/${id}`)).status).toBe(204);
    expect(await redis.zcard(keys.tagIndex('alpha', 'gone-soon'))).toBe(0);
    expect(await redis.zcard(keys.tagIndex('alpha', 'two'))).toBe(0);
    expect(ids(await api.http('GET', '/v1/jobs?tag=gone-soon'))).toEqual([]);
  });
});

describe('POST /v1/jobs/{id}/replay', () => {
  it('submits a new task with the same type, input and tags, naming the original', async () => {
    const id = await submit({
      type: 'sleep',
      input: { ms: 60_000 },
      tags: ['again'],
      ttlMs: 600_000,
      timeoutMs: 90_000,
    });
    const res = await api.http('POST', `/v1/jobs/${id}/replay`);
    expect(res.status, res.text).toBe(202);
    const copy = res.body;
    expect(copy.taskId).not.toBe(id);
    expect(res.headers.get('location')).toBe(`/v1/jobs/${copy.taskId}`);
    expect(copy).toMatchObject({ type: 'sleep', status: 'working', tags: ['again'], replayOf: id });
    expect(copy.ttlMs).toBe(600_000);
    const full = await api.http('GET', `/v1/jobs/${copy.taskId}?include=input`);
    expect(full.body.input).toEqual({ ms: 60_000 });
    expect(full.body.replayOf).toBe(id);
    // The original is untouched.
    expect((await api.http('GET', `/v1/jobs/${id}`)).body).not.toHaveProperty('replayOf');
  });

  it("is 404 for another tenant's task, a missing one and a malformed id", async () => {
    const theirs = await submit({ type: 'echo', input: {} }, KEY_B);
    for (const id of [theirs, '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const res = await api.http('POST', `/v1/jobs/${id}/replay`);
      expect(res.status, id).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    // Nothing was made for alpha.
    const listed = await api.http('GET', '/v1/jobs?limit=100');
    expect(listed.body.tasks.some((t: { replayOf?: string }) => t.replayOf === theirs)).toBe(false);
  });

  it('GET ?include= takes only input (400 otherwise, 404 first for a foreign task)', async () => {
    const id = await submit({ type: 'echo', input: {} });
    expect((await api.http('GET', `/v1/jobs/${id}?include=result`)).status).toBe(400);
    const theirs = await submit({ type: 'echo', input: { secret: 1 } }, KEY_B);
    expect((await api.http('GET', `/v1/jobs/${theirs}?include=result`)).status).toBe(404);
    expect((await api.http('GET', `/v1/jobs/${theirs}?include=input`)).status).toBe(404);
  });
});

describe('POST /v1/jobs/replay', () => {
  // An API and worker of their own: the sleeps above would hold a worker's stop.
  let own: InProcessApi;
  let worker: Proc;
  beforeAll(async () => {
    own = await startInProcessApi();
    worker = await startWorker(own.prefix);
  }, 30_000);
  afterAll(async () => {
    await worker?.stop();
    await own?.close();
  });

  const replay = (body: unknown, key?: string) =>
    own.http('POST', '/v1/jobs/replay', { body, ...(key ? { key } : {}) });
  async function submit(body: Record<string, unknown>, key?: string): Promise<string> {
    const res = await own.http('POST', '/v1/jobs', { body, ...(key ? { key } : {}) });
    expect(res.status, res.text).toBe(202);
    return res.body.taskId as string;
  }

  it("re-drives a day's failed runs of a type: one 207 entry per task, newest first", async () => {
    const failed: string[] = [];
    for (let i = 0; i < 3; i++) {
      failed.unshift(
        await submit({ type: 'fail', input: { message: `boom ${i}` }, tags: ['day'] }),
      );
    }
    const fine = await submit({ type: 'echo', input: {}, tags: ['day'] });
    await waitFor(
      async () => {
        const states = await Promise.all(
          [...failed, fine].map(
            async (id) => (await own.http('GET', `/v1/jobs/${id}`)).body.status,
          ),
        );
        return states.every((s) => s === 'failed' || s === 'completed') ? true : undefined;
      },
      { what: 'the day finished' },
    );
    const res = await replay({ filter: { status: 'failed', tag: 'day' }, limit: 100 });
    expect(res.status, res.text).toBe(207);
    expect(res.body.results.map((r: { taskId: string }) => r.taskId)).toEqual(failed);
    for (const r of res.body.results) {
      expect(r.status).toBe(202);
      expect(r.task).toMatchObject({ type: 'fail', replayOf: r.taskId, tags: ['day'] });
    }
    // `limit` caps it; `since` after the tasks matches none.
    const two = await replay({ filter: { status: 'failed', tag: 'day' }, limit: 2 });
    expect(two.body.results).toHaveLength(2);
    const later = new Date(Date.now() + 60_000).toISOString();
    const none = await replay({ filter: { tag: 'day', since: later }, limit: 10 });
    expect(none.status).toBe(207);
    expect(none.body.results).toEqual([]);
  }, 60_000);

  it('replays only tasks created since `since`', async () => {
    await submit({ type: 'echo', input: { when: 'before' }, tags: ['since'] });
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const after = await submit({ type: 'echo', input: { when: 'after' }, tags: ['since'] });
    const res = await replay({ filter: { tag: 'since', since }, limit: 10 });
    expect(res.body.results.map((r: { taskId: string }) => r.taskId)).toEqual([after]);
  });

  it("never replays another tenant's tasks", async () => {
    await submit({ type: 'echo', input: {}, tags: ['alpha-only'] });
    const res = await replay({ filter: { tag: 'alpha-only' }, limit: 10 }, KEY_B);
    expect(res.status).toBe(207);
    expect(res.body.results).toEqual([]);
  });

  it.each([
    ['no limit', { filter: {} }, 'limit'],
    ['a limit over 100', { filter: {}, limit: 101 }, 'limit'],
    ['a limit of 0', { filter: {}, limit: 0 }, 'limit'],
    ['an unknown filter', { filter: { owner: 'x' }, limit: 1 }, 'filter.owner'],
    ['a bad since', { filter: { since: 'yesterday' }, limit: 1 }, 'filter.since'],
    ['a bad status', { filter: { status: 'done' }, limit: 1 }, 'filter.status'],
    ['a tag too long', { filter: { tag: 'z'.repeat(65) }, limit: 1 }, 'filter.tag'],
  ])('refuses %s with a 400 problem', async (_what, body, path) => {
    const res = await replay(body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });
});
