/** An index member: 13 digits of inverted creation time, ':' and the task id. */
const MEMBER = /^\d{13}:[0-9a-f-]{36}$/;

/** The opaque `nextCursor` for an index member. */
export function encodeCursor(member: string): string {
  return Buffer.from(member).toString('base64url');
}

/** The index member a cursor names, or `null` when it is not one we gave out. */
export function decodeCursor(cursor: string): string | null {
  const member = Buffer.from(cursor, 'base64url').toString();
  return MEMBER.test(member) ? member : null;
}
