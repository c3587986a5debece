import { describe, expect, it } from 'vitest';
import { mintSession, readSession } from './session.js';

describe('MCP session ids', () => {
  it('carry whether the client accepts form elicitation and declared tasks, and nothing else', () => {
    expect(readSession(mintSession({ elicitation: {} }))).toEqual({
      elicitation: true,
      tasks: false,
    });
    expect(readSession(mintSession({ elicitation: { form: {}, url: {} }, tasks: {} }))).toEqual({
      elicitation: true,
      tasks: true,
    });
    expect(readSession(mintSession({ elicitation: { url: {} } }))).toEqual({
      elicitation: false,
      tasks: false,
    });
    expect(readSession(mintSession({ tasks: { list: {} } }))).toEqual({
      elicitation: false,
      tasks: true,
    });
    expect(readSession(mintSession({ tasks: true }))).toEqual({ elicitation: false, tasks: false });
    expect(readSession(mintSession({}))).toEqual({ elicitation: false, tasks: false });
    expect(readSession(mintSession(null))).toEqual({ elicitation: false, tasks: false });
  });

  it('minted before the tasks flag still read, as a tasks client (what they were served as)', () => {
    expect(readSession(`lr1.${'A'.repeat(22)}.e`)).toEqual({ elicitation: true, tasks: true });
    expect(readSession(`lr1.${'A'.repeat(22)}.-`)).toEqual({ elicitation: false, tasks: true });
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
      `lr1.${'A'.repeat(22)}.ex`,
      `lr1.${'A'.repeat(22)}.et-`,
      crypto.randomUUID(),
    ]) {
      expect(readSession(other)).toBeNull();
    }
  });
});
