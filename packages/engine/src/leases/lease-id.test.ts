import { describe, expect, it } from 'vitest';
import { decodeLeaseId, encodeLeaseId } from './lease-id.js';

describe('lease ids', () => {
  it('carry the shard, queue, job and token, and read back the same', () => {
    const ref = { shard: 3, queue: 'tasks.py-wordcount', jobId: 'a1b2-c3', token: 'tok:en-1' };
    const id = encodeLeaseId(ref);
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/); // safe in a path segment as it is
    expect(decodeLeaseId(id)).toEqual(ref);
  });

  it('carry the run a completion needs (decision 68), and read it back', () => {
    const run = { type: 'py-wordcount', startedAt: 1_780_000_000_123, timeoutMs: 0, attempt: 2 };
    const ref = { shard: 0, queue: 'tasks.py-wordcount', jobId: 'j', token: 't', run };
    expect(decodeLeaseId(encodeLeaseId(ref))).toEqual(ref);
  });

  it.each([
    '',
    'not a lease',
    'x'.repeat(2000),
    Buffer.from('0\nq\nj').toString('base64url'), // three parts
    Buffer.from('x\nq\nj\nt').toString('base64url'), // shard not a number
    Buffer.from('0\n\nj\nt').toString('base64url'), // no queue
    Buffer.from('0\nq\nj\nt\nmore').toString('base64url'),
    Buffer.from('0\nq\nj\nt\nx\nsoon\n0\n1').toString('base64url'), // start not a number
    Buffer.from('0\nq\nj\nt\n\n1\n0\n1').toString('base64url'), // no type
  ])('reads %j as no lease of ours', (id) => {
    expect(decodeLeaseId(id)).toBeNull();
  });
});
