import { defineScript } from '../lua/script.js';

/** Whether the tenant was taken out (`removed`), or left in because its open set exists. */
export type DropIdleReply = { kind: 'ok'; removed: boolean } | { kind: 'open' };

/** `lua/drop-idle-tenant.lua`: drops a tenant with no open set from the set of tenants. */
export const dropIdleTenant = defineScript({
  file: 'drop-idle-tenant',
  keys: ['tenants', 'open'],
  args: ['tenant'],
  decode: ([code, removed]): DropIdleReply => {
    if (code === 'ok') return { kind: 'ok', removed: Number(removed) === 1 };
    if (code === 'open') return { kind: 'open' };
    throw new Error(`unexpected reply to an idle tenant's drop: ${code}`);
  },
});
