import type { JobTypeInfo, Schedule } from '@longrun/client';
import type { TaskHandle, TaskList } from '@longrun/core';
import { percentOf } from './progress.js';

/** Pretty JSON for people; one line per value for `--json` would be `JSON.stringify(v)`. */
export function pretty(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * A handle as aligned `name  value` lines.
 * @example describe(handle) // 'task      8b7c…\ntype      sleep\nstatus    working …'
 */
export function describe(task: TaskHandle): string {
  const rows: [string, string][] = [
    ['task', task.taskId],
    ['type', task.type],
    ['status', task.statusMessage ? `${task.status} (${task.statusMessage})` : task.status],
  ];
  const percent = percentOf(task.progress);
  if (percent !== undefined) rows.push(['progress', `${Math.floor(percent)}%`]);
  else if (task.progress !== undefined) rows.push(['progress', JSON.stringify(task.progress)]);
  if (task.tags?.length) rows.push(['tags', task.tags.join(', ')]);
  if (task.replayOf) rows.push(['replay of', task.replayOf]);
  rows.push(['created', task.createdAt], ['updated', task.lastUpdatedAt]);
  if (task.status === 'completed') rows.push(['result', JSON.stringify(task.result)]);
  if (task.error) rows.push(['error', task.error.message]);
  let text = rows.map(([name, value]) => `${name.padEnd(10)}${value}`).join('\n') + '\n';
  if (task.inputRequest) text += inputPrompt(task);
  return text;
}

/** What a person needs to answer an `input_required` task. */
export function inputPrompt(task: TaskHandle): string {
  const request = task.inputRequest;
  if (!request) return '';
  return [
    `Task ${task.taskId} needs input: ${request.message}`,
    `Answer with: longrun input ${task.taskId} --input '<json>'`,
    'The answer must match this JSON Schema:',
    JSON.stringify(request.schema, null, 2),
    '',
  ].join('\n');
}

/** Tasks as a table, newest first, with the cursor of the next page. */
export function table(list: TaskList): string {
  if (list.tasks.length === 0) return 'no tasks\n';
  // A TAGS column only when a task on the page has tags: other pages read as they always did.
  const tagged = list.tasks.some((t) => t.tags?.length);
  const lines = columns([
    ['TASK', 'TYPE', 'STATUS', 'UPDATED', ...(tagged ? ['TAGS'] : []), 'MESSAGE'],
    ...list.tasks.map((t) => [
      t.taskId,
      t.type,
      t.status,
      t.lastUpdatedAt,
      ...(tagged ? [t.tags?.join(',') ?? ''] : []),
      t.statusMessage,
    ]),
  ]);
  if (list.nextCursor) lines.push(`more: longrun list --cursor ${list.nextCursor}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Registered job types as a table; a type no live worker serves says its tasks wait.
 * @example typesTable(types) // 'NAME   VERSION           QUEUE       WORKERS  ATTEMPTS\nsleep  3f0c…'
 */
export function typesTable(types: readonly JobTypeInfo[]): string {
  if (types.length === 0) return 'no job types registered: start a worker that serves them\n';
  const lines = columns([
    ['NAME', 'VERSION', 'QUEUE', 'WORKERS', 'ATTEMPTS'],
    ...types.map((t) => [
      t.name,
      t.version,
      t.queue,
      t.workers === 0 ? '0 (tasks wait)' : String(t.workers),
      String(t.attempts),
    ]),
  ]);
  return `${lines.join('\n')}\n`;
}

/** When a schedule runs, in a few words: its cron and zone, or its period. */
function timing(schedule: Schedule): string {
  if (schedule.cron !== undefined) return `cron ${schedule.cron} (${schedule.tz ?? 'UTC'})`;
  return `every ${schedule.everyMs ?? '?'} ms`;
}

/**
 * Schedules as a table, newest first.
 * @example schedulesTable(schedules) // 'SCHEDULE  TYPE  WHEN  NEXT RUN  LAST TASK\n…'
 */
export function schedulesTable(schedules: readonly Schedule[]): string {
  if (schedules.length === 0) return 'no schedules\n';
  const lines = columns([
    ['SCHEDULE', 'TYPE', 'WHEN', 'NEXT RUN', 'LAST TASK'],
    ...schedules.map((s) => [
      s.scheduleId,
      s.type,
      timing(s),
      s.nextRunAt ?? '-',
      s.lastError ? `none: ${s.lastError.message}` : (s.lastTaskId ?? '-'),
    ]),
  ]);
  return `${lines.join('\n')}\n`;
}

/** A schedule as aligned `name  value` lines. */
export function describeSchedule(schedule: Schedule): string {
  const rows: [string, string][] = [
    ['schedule', schedule.scheduleId],
    ['type', schedule.type],
    ['input', JSON.stringify(schedule.input)],
    ['when', timing(schedule)],
    ['next run', schedule.nextRunAt ?? '-'],
    ['created', schedule.createdAt],
  ];
  if (schedule.ttlMs !== undefined) rows.push(['ttl', `${schedule.ttlMs} ms`]);
  if (schedule.timeoutMs !== undefined) rows.push(['timeout', `${schedule.timeoutMs} ms`]);
  if (schedule.lastRunAt !== undefined) rows.push(['last run', schedule.lastRunAt]);
  if (schedule.lastTaskId !== undefined) rows.push(['last task', schedule.lastTaskId]);
  if (schedule.lastError) {
    rows.push(['last error', `${schedule.lastError.at}: ${schedule.lastError.message}`]);
  }
  return rows.map(([name, value]) => `${name.padEnd(11)}${value}`).join('\n') + '\n';
}

/** Rows as left-aligned columns two spaces apart (the last column is not padded). */
function columns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows.map((row) =>
    row
      .map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!)))
      .join('  ')
      .trimEnd(),
  );
}
