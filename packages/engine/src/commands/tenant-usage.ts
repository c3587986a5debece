import { defineScript } from '../lua/script.js';

/** `lua/tenant-usage.lua`: the tenant's open tasks and stored bytes, expired ones given back. */
export const tenantUsage = defineScript({
  file: 'tenant-usage',
  keys: ['open', 'usage'],
  args: ['now'],
  decode: ([, open, bytes]) => ({ open: Number(open), bytes: Number(bytes) }),
});
