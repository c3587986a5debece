import { defineScript } from '../lua/script.js';

/**
 * What a push config change did: `ok`; `missing` (no such task for the tenant); `callback` (the
 * task has a longrun webhook); `absent` (no config of that id to remove); or the task has `full`
 * configs already, none of this id.
 */
export type PushChange = 'ok' | 'missing' | 'callback' | 'absent' | { full: number };

/** `lua/set-push.lua`: sets or removes one of a task's A2A push notification configs. */
export const setPush = defineScript({
  file: 'set-push',
  keys: ['task', 'usage'],
  args: ['tenant', 'id', 'op', 'configId', 'config', 'max'],
  decode: ([code, current]): PushChange => {
    switch (code) {
      case 'ok':
      case 'missing':
      case 'callback':
      case 'absent':
        return code;
      case 'full':
        return { full: Number(current) };
      default:
        throw new Error(`unexpected reply to a push config change: ${code}`);
    }
  },
});
