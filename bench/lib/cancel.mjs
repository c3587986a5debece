// Figure 7: cancelling running `sleep` jobs: the API's answer, and the moment the worker aborted
// the handler (its "cancel: aborted running handler" log line, pino `time`, same machine clock).
import { waitFor } from './children.mjs';
import { auth, C, jsonAuth } from './config.mjs';
import { warn } from './context.mjs';

const percentile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN;
};

/** `worker` must log at info level. */
export async function cancelFigures(api, worker) {
  const aborted = new Map();
  worker.child.on((line) => {
    if (!line.includes('cancel: aborted running handler')) return;
    try {
      const entry = JSON.parse(line);
      aborted.set(entry.taskId, entry.time);
    } catch {
      // not a JSON log line
    }
  });
  const call = async (method, path, body) => {
    const res = await fetch(`${api.base}${path}`, {
      method,
      headers: body === undefined ? auth : jsonAuth,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, body: await res.json() };
  };
  const answers = [];
  const aborts = [];
  let missing = 0;
  let wrong = 0;
  for (let done = 0; done < C.cancels; done += C.cancelBatch) {
    const n = Math.min(C.cancelBatch, C.cancels - done);
    const submit = () => call('POST', '/v1/jobs', { type: 'sleep', input: { ms: 60_000 } });
    const ids = (await Promise.all(Array.from({ length: n }, submit))).map((r) => r.body.taskId);
    // Running: the worker wrote "running" (or a progress message) over "queued".
    await waitFor(
      async () =>
        (await Promise.all(ids.map((id) => call('GET', `/v1/jobs/${id}`)))).every(
          (r) => r.body.statusMessage !== 'queued',
        ),
      { timeoutMs: 30_000, intervalMs: 100, what: 'sleep jobs running' },
    );
    const sent = new Map();
    for (const id of ids) {
      const t0 = Date.now();
      const res = await call('POST', `/v1/jobs/${id}/cancel`);
      answers.push(Date.now() - t0);
      sent.set(id, t0);
      if (res.status !== 200 || res.body.status !== 'cancelled') wrong += 1;
    }
    await waitFor(() => ids.every((id) => aborted.has(id)), {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: 'handlers aborted',
    }).catch(() => undefined);
    for (const id of ids) {
      if (aborted.has(id)) aborts.push(aborted.get(id) - sent.get(id));
      else missing += 1;
    }
  }
  if (wrong > 0) warn(`cancel: ${wrong} answers were not 200 + cancelled`);
  const stats = (xs) => ({
    p50: percentile(xs, 0.5),
    p99: percentile(xs, 0.99),
    max: Math.max(...xs),
  });
  return { n: answers.length, missing, answer: stats(answers), aborted: stats(aborts) };
}
