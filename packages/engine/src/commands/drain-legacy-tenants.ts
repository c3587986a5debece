import { defineScript } from '../lua/script.js';

/** `lua/drain-legacy-tenants.lua`: how many tenants moved from the legacy set. */
export const drainLegacyTenants = defineScript({
  file: 'drain-legacy-tenants',
  keys: ['legacy', 'openTenants'],
  args: ['batch'],
  decode: ([, moved]) => Number(moved),
});
