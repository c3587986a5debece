import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { WebhookTargetPolicy } from './webhook-target.js';

/**
 * POSTs `body`; resolves with the status code once the status line and headers are in. The whole
 * exchange is bounded by `timeoutMs`, not just idle time: a receiver that trickles bytes cannot
 * hold a delivery slot past it. `lookup` vets addresses before connecting.
 */
export function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { lookup: WebhookTargetPolicy['lookup']; timeoutMs: number },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = request(url, { method: 'POST', headers, lookup: opts.lookup }, (res) => {
      clearTimeout(bound);
      resolve(res.statusCode ?? 0);
      // The body does not matter: drain what comes quickly, then let the socket go.
      res.resume();
      res.on('error', () => undefined);
      setTimeout(() => res.destroy(), 1000).unref();
    });
    const bound = setTimeout(() => {
      const error = new Error(`no answer within ${opts.timeoutMs} ms`);
      req.destroy(error);
      reject(error);
    }, opts.timeoutMs);
    req.on('error', (error) => {
      clearTimeout(bound);
      reject(error);
    });
    req.end(body);
  });
}
