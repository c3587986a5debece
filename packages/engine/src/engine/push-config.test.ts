import { describe, expect, it } from 'vitest';
import { WebhookTargetPolicy } from '../webhook-target.js';
import { pushTarget } from './push-config.js';

const taskId = '8b7c2f0e-3f6a-4d6e-9a55-0c7f4f1d2b11';
const strict = new WebhookTargetPolicy([]);

describe('pushTarget', () => {
  it('keeps what a config gives; its id defaults to the task’s', () => {
    expect(pushTarget({ url: 'https://hooks.example.com/a2a' }, taskId, strict, '')).toEqual({
      format: 'a2a',
      id: taskId,
      url: 'https://hooks.example.com/a2a',
    });
    const full = {
      id: 'cfg-1',
      url: 'https://hooks.example.com/a2a',
      token: 'tok en',
      authentication: { scheme: 'Bearer', credentials: 'abc.def' },
    };
    expect(pushTarget(full, taskId, strict, '')).toEqual({ format: 'a2a', ...full });
    expect(pushTarget({ ...full, id: '' }, taskId, strict, '')).toMatchObject({ id: taskId });
  });

  it.each([
    ['http://10.0.0.1/', 'url', /private or loopback/],
    ['http://127.0.0.1:9/hook', 'url', /private or loopback/],
    ['http://localhost:9/hook', 'url', /localhost/],
    ['http://user:pw@example.com/hook', 'url', /credentials/],
  ])('refuses %s before any connection', (url, path, message) => {
    const refused = pushTarget({ url }, taskId, strict, 'pushNotificationConfig');
    expect(refused).toMatchObject({ kind: 'invalid', status: 400 });
    expect('errors' in refused && refused.errors).toEqual([
      { path: `pushNotificationConfig.${path}`, message: expect.stringMatching(message) },
    ]);
  });

  it('allows what LONGRUN_WEBHOOK_ALLOW names', () => {
    const loopback = new WebhookTargetPolicy(['127.0.0.1']);
    expect(pushTarget({ url: 'http://127.0.0.1:9/hook' }, taskId, loopback, '')).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
    });
  });

  it.each([
    [{ url: 'ftp://example.com/x' }, 'url'],
    [{ url: 'https://example.com/x', token: 'a\r\nX-Evil: 1' }, 'token'],
    [
      { url: 'https://example.com/x', authentication: { scheme: 'Bearer x', credentials: 'c' } },
      'authentication.scheme',
    ],
    [
      { url: 'https://example.com/x', authentication: { scheme: 'Bearer', credentials: '' } },
      'authentication.credentials',
    ],
    [{ url: 'https://example.com/x', id: 'has space' }, 'id'],
    [{ url: 'https://example.com/x', secret: 'not an A2A field' }, 'secret'],
  ])('refuses a config that is not one: %j', (config, path) => {
    const refused = pushTarget(config, taskId, strict, '');
    expect('errors' in refused && refused.errors.map((e) => e.path)).toEqual([path]);
  });
});
