import { describe, expect, it } from 'vitest';
import { LeaseIds } from './lease-id.js';

const ids = new LeaseIds(Buffer.from('a secret of thirty-two bytes....'));
const run = { type: 'py-wordcount', startedAt: 1_780_000_000_123, timeoutMs: 0, attempt: 2 };
const ref = { shard: 3, queue: 'tasks.py-wordcount', jobId: 'a1b2-c3', token: 'tok:en-1', run };

describe('lease ids (decision 79)', () => {
  it('carry the shard, queue, job, token and run, and read back the same for their worker', () => {
    const id = ids.encode('py', ref);
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/); // safe in a path segment as it is
    expect(ids.decode('py', id)).toEqual(ref);
  });

  it("are no lease of another worker's, nor of another secret's", () => {
    const id = ids.encode('py', ref);
    expect(ids.decode('go', id)).toBeNull();
    expect(new LeaseIds(Buffer.from('another secret')).decode('py', id)).toBeNull();
  });

  it('are no lease once anything they carry is changed', () => {
    const lines = Buffer.from(ids.encode('py', ref), 'base64url').toString('utf8').split('\n');
    for (let at = 0; at < lines.length; at++) {
      const changed = [...lines];
      changed[at] = at === 0 ? '0' : `${changed[at]}x`;
      expect(ids.decode('py', Buffer.from(changed.join('\n')).toString('base64url'))).toBeNull();
    }
    expect(ids.decode('py', Buffer.from(lines.slice(0, 4).join('\n')).toString('base64url'))).toBe(
      null,
    );
  });

  it.each(['', 'not a lease', 'x'.repeat(2000), Buffer.from('0\nq\nj\nt').toString('base64url')])(
    'reads %j as no lease of ours',
    (id) => {
      expect(ids.decode('py', id)).toBeNull();
    },
  );
});
