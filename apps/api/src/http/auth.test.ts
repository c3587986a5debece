import { describe, expect, it } from 'vitest';
import { ApiKeys } from './auth.js';

describe('ApiKeys', () => {
  const keys = new ApiKeys(
    new Map([
      ['alpha-key-0123456789', 'alpha'],
      ['beta-key-0123456789', 'beta'],
    ]),
  );

  it('maps each key to its tenant, again once it has been accepted', () => {
    for (let i = 0; i < 3; i++) {
      expect(keys.tenantFor('alpha-key-0123456789')).toBe('alpha');
      expect(keys.tenantFor('beta-key-0123456789')).toBe('beta');
    }
  });

  it('refuses near misses of an accepted key, before and after it was accepted', () => {
    const near = ['alpha-key-012345678', 'alpha-key-01234567890', 'Alpha-key-0123456789', ''];
    for (const key of near) expect(keys.tenantFor(key)).toBeNull();
    expect(keys.tenantFor('alpha-key-0123456789')).toBe('alpha');
    for (const key of near) expect(keys.tenantFor(key)).toBeNull();
  });

  it('stays right past the number of keys it remembers', () => {
    const many = new Map(Array.from({ length: 1500 }, (_, i) => [`key-${i}-0123456789`, `t${i}`]));
    const all = new ApiKeys(many);
    for (let round = 0; round < 2; round++) {
      for (const [key, tenant] of many) expect(all.tenantFor(key)).toBe(tenant);
    }
    expect(all.tenantFor('key-1500-0123456789')).toBeNull();
  });
});
