export interface HttpResult {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
  text: string;
}

/** A tiny fetch wrapper bound to one base URL and one API key. */
export function httpClient(baseUrl: string, apiKey?: string) {
  return async function http(
    method: string,
    path: string,
    opts: {
      body?: unknown;
      raw?: string | Buffer;
      headers?: Record<string, string>;
      key?: string | null;
    } = {},
  ): Promise<HttpResult> {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? apiKey : opts.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

/** Polls `check` until it returns a truthy value or the time runs out. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false>,
  { timeoutMs = 15_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`Timed out waiting for ${what} (last: ${String(last)})`);
}
