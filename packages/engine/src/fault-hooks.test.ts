import { describe, expect, it } from 'vitest';
import { crashingFaults } from './fault-hooks.js';

describe('crashingFaults', () => {
  it('builds no hooks without a crash point (production: nothing on the hot paths)', () => {
    expect(crashingFaults(undefined)).toBeUndefined();
  });

  it('builds only the hook the crash point names', () => {
    // Called, they would kill this process: only their presence is checked.
    expect(Object.keys(crashingFaults('after-create') ?? {})).toEqual(['afterCreate']);
    expect(Object.keys(crashingFaults('after-park') ?? {})).toEqual(['afterPark']);
  });
});
