import { defineScript } from '../lua/script.js';

/** `lua/drop-idle-tenant.lua`: whether the tenant was taken out (its open set was gone). */
export const dropIdleTenant = defineScript({
  file: 'drop-idle-tenant',
  keys: ['openTenants', 'open'],
  args: ['tenant'],
  decode: ([, dropped]) => Number(dropped) === 1,
});
