import { describe, expect, it } from 'vitest';
import { PendingAnswers } from './pending.js';

describe('PendingAnswers', () => {
  it('hands an answer to the request it names, and only ours', async () => {
    const pending = new PendingAnswers();
    const { id, answer } = pending.ask(5_000, new AbortController().signal);
    expect(pending.take({ jsonrpc: '2.0', id: 7, result: {} })).toBe(false);
    expect(pending.take({ jsonrpc: '2.0', id: 'longrun-input:x', result: {} })).toBe(false);
    expect(pending.take({ jsonrpc: '2.0', id, method: 'ping' })).toBe(false); // a request
    expect(pending.take({ jsonrpc: '2.0', id, result: { action: 'accept' } })).toBe(true);
    await expect(answer).resolves.toEqual({ jsonrpc: '2.0', id, result: { action: 'accept' } });
    // Answered once: a second answer is taken (ours) and dropped.
    expect(pending.take({ jsonrpc: '2.0', id, result: {} })).toBe(true);
  });

  it('gives up when the call ends or the client does not answer in time', async () => {
    const pending = new PendingAnswers();
    const gone = new AbortController();
    const call = pending.ask(5_000, gone.signal);
    gone.abort();
    await expect(call.answer).rejects.toThrow(/call ended/);
    const late = pending.ask(10, new AbortController().signal);
    await expect(late.answer).rejects.toThrow(/did not answer within 10 ms/);
  });
});
