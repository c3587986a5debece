import { createHmac, timingSafeEqual } from 'node:crypto';
import { webhookPayloadSchema, type WebhookPayload } from '@longrun/core';

export interface VerifyWebhookOptions {
  /** The `callback.secret` the task was submitted with. */
  secret: string;
  /** The raw request body, exactly as received (not re-serialized JSON). */
  body: string | Uint8Array;
  /** The request headers: a `Headers` object or Node's `req.headers`. */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** Largest accepted distance between `Longrun-Timestamp` and now, in seconds (default 300). */
  toleranceSec?: number;
  /** The current time in ms (for tests). */
  now?: number;
}

export type WebhookFailure =
  'missing-header' | 'bad-timestamp' | 'stale-timestamp' | 'bad-signature' | 'bad-payload';

/** A webhook delivery that must not be trusted; `reason` says why. Answer it with 400 or 401. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookFailure;

  constructor(reason: WebhookFailure, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

/**
 * Checks a webhook delivery: `Longrun-Signature` (`v1=<hex HMAC-SHA256(secret,
 * "<timestamp>.<body>")>`, compared in constant time) and that `Longrun-Timestamp` is within
 * `toleranceSec` of now (replays of old deliveries fail). Returns the parsed payload; dedupe on
 * its `id`, since deliveries are at least once.
 * @example
 * app.post('/hooks/longrun', express.raw({ type: 'application/json' }), (req, res) => {
 *   const event = verifyWebhook({ secret, body: req.body, headers: req.headers });
 *   console.log(event.task.status);
 *   res.sendStatus(204);
 * });
 */
export function verifyWebhook(opts: VerifyWebhookOptions): WebhookPayload {
  if (typeof opts.body !== 'string' && !(opts.body instanceof Uint8Array)) {
    throw new TypeError('verifyWebhook needs the raw body (string or bytes), not parsed JSON');
  }
  const body = typeof opts.body === 'string' ? opts.body : Buffer.from(opts.body).toString('utf8');
  const timestamp = header(opts.headers, 'longrun-timestamp');
  const signature = header(opts.headers, 'longrun-signature');
  if (timestamp === undefined || signature === undefined) {
    throw new WebhookVerificationError(
      'missing-header',
      'Longrun-Timestamp and Longrun-Signature headers are required',
    );
  }
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError('bad-timestamp', 'Longrun-Timestamp is not unix seconds');
  }
  const expected = createHmac('sha256', opts.secret)
    .update(`${timestamp}.`)
    .update(opts.body)
    .digest();
  // Several `v1=` values may be sent (e.g. while a secret is rotated): any match is enough.
  const candidates = signature
    .split(/[,\s]+/)
    .filter((part) => part.startsWith('v1='))
    .map((part) => part.slice(3));
  let matched = false;
  for (const candidate of candidates) {
    const given = /^[0-9a-f]{64}$/i.test(candidate) ? Buffer.from(candidate, 'hex') : undefined;
    if (given && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) {
    throw new WebhookVerificationError('bad-signature', 'Longrun-Signature does not match');
  }
  // A genuine signature on an old timestamp is a replay of a captured delivery.
  const nowSec = (opts.now ?? Date.now()) / 1000;
  if (Math.abs(nowSec - Number(timestamp)) > (opts.toleranceSec ?? 300)) {
    throw new WebhookVerificationError(
      'stale-timestamp',
      'Longrun-Timestamp is outside the tolerance',
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new WebhookVerificationError('bad-payload', 'The body is not JSON');
  }
  const parsed = webhookPayloadSchema.safeParse(json);
  if (!parsed.success) {
    throw new WebhookVerificationError(
      'bad-payload',
      `Unexpected payload: ${parsed.error.message}`,
    );
  }
  return parsed.data;
}

function header(headers: VerifyWebhookOptions['headers'], name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}
