import { describe, expect, it } from 'vitest';
import type { RegisteredJobType } from '@longrun/engine';
import { PLAIN_CALL_MAX_WAIT_MS, toolsFrom } from './tools.js';

function type(name: string, extra: Partial<RegisteredJobType> = {}): RegisteredJobType {
  const base = {
    name,
    version: '0123456789abcdef',
    attempts: 1,
    backoffMs: 1000,
    inputSchema: { type: 'object', properties: {} },
    registeredAt: 0,
    lastSeenAt: 0,
    workers: 1,
    ...extra,
  };
  return { ...base, versions: [base] };
}

describe('job types as tools', () => {
  it('are sorted by name; a name MCP does not allow is left out', () => {
    const tools = toolsFrom([type('b'), type('a'), type('has space'), type('x'.repeat(129))]);
    expect(tools.map((t) => t.name)).toEqual(['a', 'b']);
  });

  it("describe themselves with the input schema's description, else a sentence", () => {
    const [described, plain] = toolsFrom([
      type('a', { inputSchema: { type: 'object', description: 'Does A.' } }),
      type('b', { attempts: 3 }),
    ]);
    expect(described!.description).toBe('Does A.');
    expect(plain!.description).toBe('Runs the longrun job type "b" as a task, up to 3 attempts.');
  });

  it('are short (taskSupport optional) when their runs are bounded by a timeout of 30 s or less', () => {
    const [a, b, c, d] = toolsFrom([
      type('a', { timeoutMs: 10_000 }),
      type('b', { timeoutMs: 10_000, attempts: 3, backoffMs: 100 }),
      type('c', { timeoutMs: 30_001 }),
      type('d', { timeoutMs: 30_000, attempts: 5, backoffMs: 60_000 }),
    ]);
    expect(a).toMatchObject({ taskSupport: 'optional', plainWaitMs: 15_000 });
    expect(b).toMatchObject({ taskSupport: 'optional', plainWaitMs: 30_000 + 100 + 200 + 5_000 });
    expect(c).toMatchObject({ taskSupport: 'required' });
    expect(c).not.toHaveProperty('plainWaitMs');
    expect(d).toMatchObject({ plainWaitMs: PLAIN_CALL_MAX_WAIT_MS });
    expect(toolsFrom([type('e')])[0]).toMatchObject({ taskSupport: 'required' });
  });

  it('always have an object input schema', () => {
    const [tool] = toolsFrom([type('a', { inputSchema: { anyOf: [] } })]);
    expect(tool!.inputSchema).toEqual({ anyOf: [], type: 'object' });
  });
});
