import { createHmac } from 'node:crypto';

/** Header names of a webhook delivery. */
export const WEBHOOK_HEADERS = {
  deliveryId: 'Longrun-Delivery-Id',
  timestamp: 'Longrun-Timestamp',
  signature: 'Longrun-Signature',
} as const;

/**
 * The `Longrun-Signature` value: `v1=` + hex HMAC-SHA256 of `"<timestamp>.<raw body>"`.
 * @example webhookSignature('s3cret-s3cret-s3cret', 1764500000, '{"id":"…"}') // 'v1=3f…'
 */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
