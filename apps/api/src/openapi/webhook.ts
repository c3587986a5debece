import { WEBHOOK_HEADERS } from '@longrun/core';
import { ref, type Json } from './json-schema.js';

/**
 * The path item of a `POST <callback.url>` that longrun makes on every status change (the
 * `task.updated` webhook; the outbox in the engine sends it).
 */
export function webhookDelivery(): Json {
  const header = (name: string, description: string, schema: Json, required = true) => ({
    name,
    in: 'header',
    required,
    description,
    schema,
  });
  return {
    post: {
      summary: 'A task changed status',
      security: [],
      description:
        'Sent at least once per status change (not per progress update), retried with exponential backoff until the receiver answers 2xx. Receivers dedupe on the delivery id.',
      parameters: [
        header(WEBHOOK_HEADERS.deliveryId, 'Unique per delivery; equals the body `id`.', {
          type: 'string',
        }),
        header(WEBHOOK_HEADERS.timestamp, 'Unix seconds when this attempt was signed.', {
          type: 'string',
          pattern: '^\\d+$',
        }),
        header(
          WEBHOOK_HEADERS.signature,
          'With `callback.secret` only: `v1=` + hex HMAC-SHA256(secret, `"<timestamp>.<raw body>"`).',
          { type: 'string', pattern: '^v1=[0-9a-f]{64}$' },
          false,
        ),
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('schemas', 'WebhookPayload') } },
      },
      responses: {
        '2XX': { description: 'Delivered; not retried.' },
        default: { description: 'Not delivered; retried with backoff.' },
      },
    },
  };
}
