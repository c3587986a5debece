import { defineScript } from '../lua/script.js';

/**
 * What a push config change did: `ok`; `missing` (no such task for the tenant); `callback` (the
 * task has a longrun webhook); `absent` (no config of that id to remove); or another config's id
 * is set (`taken`).
 */
export type PushChange = 'ok' | 'missing' | 'callback' | 'absent' | { taken: string };

/** `lua/set-push.lua`: sets or removes a task's A2A push notification config. */
export const setPush = defineScript({
  file: 'set-push',
  keys: ['task', 'usage'],
  args: ['tenant', 'id', 'op', 'configId', 'config'],
  decode: ([code, current]): PushChange => {
    switch (code) {
      case 'ok':
      case 'missing':
      case 'callback':
      case 'absent':
        return code;
      case 'taken':
        return { taken: String(current) };
      default:
        throw new Error(`unexpected reply to a push config change: ${code}`);
    }
  },
});
