import { describe, expect, it } from 'vitest';
import { mintSession, readSession } from './session.js';

describe('MCP session ids', () => {
  it('carry whether the client accepts form elicitation, and nothing else', () => {
    expect(readSession(mintSession({ elicitation: {} }))).toEqual({ elicitation: true });
    expect(readSession(mintSession({ elicitation: { form: {}, url: {} } }))).toEqual({
      elicitation: true,
    });
    expect(readSession(mintSession({ elicitation: { url: {} } }))).toEqual({ elicitation: false });
    expect(readSession(mintSession({}))).toEqual({ elicitation: false });
    expect(readSession(mintSession(null))).toEqual({ elicitation: false });
  });

  it('are unique, visible ASCII, and only ours are read', () => {
    const ids = new Set(Array.from({ length: 100 }, () => mintSession({})));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[\x21-\x7e]+$/);
    for (const other of [
      '',
      'abc',
      'lr1.short.e',
      `lr1.${'A'.repeat(22)}.x`,
      crypto.randomUUID(),
    ]) {
      expect(readSession(other)).toBeNull();
    }
  });
});
