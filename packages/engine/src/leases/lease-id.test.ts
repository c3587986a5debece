import { describe, expect, it } from 'vitest';
import { decodeLeaseId, encodeLeaseId } from './lease-id.js';

describe('lease ids', () => {
  it('carry the shard, queue, job and token, and read back the same', () => {
    const ref = { shard: 3, queue: 'tasks.py-wordcount', jobId: 'a1b2-c3', token: 'tok:en-1' };
    const id = encodeLeaseId(ref);
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/); // safe in a path segment as it is
    expect(decodeLeaseId(id)).toEqual(ref);
  });

  it.each([
    '',
    'not a lease',
    'x'.repeat(2000),
    Buffer.from('0\nq\nj').toString('base64url'), // three parts
    Buffer.from('x\nq\nj\nt').toString('base64url'), // shard not a number
    Buffer.from('0\n\nj\nt').toString('base64url'), // no queue
    Buffer.from('0\nq\nj\nt\nmore').toString('base64url'),
  ])('reads %j as no lease of ours', (id) => {
    expect(decodeLeaseId(id)).toBeNull();
  });
});
