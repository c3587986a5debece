import { describe, expect, it } from 'vitest';
import {
  CorruptRecordError,
  decodeHandle,
  decodeRecord,
  encodeRecord,
  FIELD,
  HANDLE_FIELDS,
  SUMMARY_FIELDS,
} from './task-codec.js';
import type { TaskRecord } from './task-record.js';

const record: TaskRecord = {
  id: '00000000-0000-4000-8000-000000000001',
  tenant: 't',
  type: 'echo',
  status: 'input_required',
  statusMessage: 'approve?',
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_500,
  ttlMs: 60_000,
  input: { a: [1, 'two'], 'key with spaces': null },
  cancelRequested: false,
  awaitingInput: true,
  progress: { step: 2 },
  error: { message: 'x', code: 'y' },
  inputRequest: { message: 'approve?', schema: { type: 'boolean' } },
  inputs: [true, { n: 1 }],
  callback: { url: 'https://example.test/hook', secret: '0123456789abcdef' },
  priority: 3,
  started: true,
  repairs: 1,
  scheduleId: '00000000-0000-4000-8000-0000000000aa',
};

function hashOf(fields: string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) hash[fields[i]!] = fields[i + 1]!;
  return hash;
}

describe('the record codec', () => {
  it('reads back exactly what it wrote', () => {
    expect(decodeRecord(record.id, hashOf(encodeRecord(record)))).toEqual(record);
  });

  it('writes only the fields given, under the names FIELD says', () => {
    expect(encodeRecord({ status: 'working', statusMessage: 'running', started: true })).toEqual([
      FIELD.status,
      'working',
      FIELD.statusMessage,
      'running',
      FIELD.started,
      '1',
    ]);
    expect(encodeRecord({ inputRequest: null })).toEqual([FIELD.inputRequest, '']);
  });

  it('reads a handle from an HMGET, and a summary without the result', () => {
    const hash = hashOf(encodeRecord({ ...record, status: 'completed', result: { ok: 1 } }));
    const handle = decodeHandle(
      record.id,
      HANDLE_FIELDS.map((f) => hash[f] ?? null),
    );
    expect(handle?.result).toEqual({ ok: 1 });
    const summary = decodeHandle(
      record.id,
      SUMMARY_FIELDS.map((f) => hash[f] ?? null),
    );
    expect(summary).not.toHaveProperty('result');
    expect(summary?.status).toBe('completed');
    // The schedule that made the task is part of both reads; a task submitted directly has none.
    expect(handle?.scheduleId).toBe(record.scheduleId);
    expect(summary?.scheduleId).toBe(record.scheduleId);
    const { scheduleId: _none, ...direct } = record;
    const plain = hashOf(encodeRecord(direct));
    expect(
      decodeHandle(
        record.id,
        HANDLE_FIELDS.map((f) => plain[f] ?? null),
      ),
    ).not.toHaveProperty('scheduleId');
  });

  it("reads a durable task's newest steps and count, in either layout, and never in a summary", () => {
    const entry = (n: number) => ({ name: `s${n}`, status: 'completed' as const, endedAt: n });
    const all = Array.from({ length: 60 }, (_, i) => entry(i + 1));
    const base = hashOf(encodeRecord(record));
    const read = (hash: Record<string, string>, fields: readonly string[] = HANDLE_FIELDS) =>
      decodeHandle(
        record.id,
        fields.map((f) => hash[f] ?? null),
      );
    // Issue 40's layout: the count and the newest 50 as one field.
    const now = {
      ...base,
      [FIELD.stepCount]: '60',
      [FIELD.stepTail]: JSON.stringify(all.slice(10)),
    };
    expect(read(now)).toMatchObject({ stepCount: 60, steps: all.slice(10) });
    // An older version's whole list (rolling upgrade): its newest 50, and its length.
    const old = { ...base, [FIELD.steps]: JSON.stringify(all) };
    expect(read(old)).toMatchObject({ stepCount: 60, steps: all.slice(10) });
    expect(read(now, SUMMARY_FIELDS)).not.toHaveProperty('steps');
    expect(read(old, SUMMARY_FIELDS)).not.toHaveProperty('steps');
    expect(read(now, SUMMARY_FIELDS)?.stepCount).toBe(60);
  });

  it('is null for a record that is gone', () => {
    expect(decodeRecord(record.id, {})).toBeNull();
    expect(
      decodeHandle(
        record.id,
        HANDLE_FIELDS.map(() => null),
      ),
    ).toBeNull();
  });

  it('refuses a record that is not in its layout', () => {
    const hash = hashOf(encodeRecord(record));
    expect(() => decodeRecord(record.id, { ...hash, [FIELD.status]: 'done' })).toThrow(
      CorruptRecordError,
    );
    expect(() => decodeRecord(record.id, { ...hash, [FIELD.createdAt]: 'soon' })).toThrow(
      /not a whole number/,
    );
    expect(() => decodeRecord(record.id, { ...hash, [FIELD.input]: '{' })).toThrow(/not JSON/);
  });
});
