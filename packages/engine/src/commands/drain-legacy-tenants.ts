import { defineScript } from '../lua/script.js';

/** `lua/drain-legacy-tenants.lua`: how many tenant names moved from the old plain set. */
export const drainLegacyTenants = defineScript({
  file: 'drain-legacy-tenants',
  keys: ['legacy', 'tenants'],
  args: ['batch'],
  decode: ([code, moved]) => {
    if (code !== 'ok') throw new Error(`unexpected reply to a legacy tenants' drain: ${code}`);
    return Number(moved);
  },
});
