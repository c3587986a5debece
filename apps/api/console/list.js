// The tasks list: filters (status, type, tag, schedule) kept in the address (#/?status=…),
// pages by the API's cursor, and the unfinished tasks on screen kept current: the first ones
// followed live (SSE), the rest polled at the interval their handles ask.
import { api, follow, poll } from './api.js';
import { announce, badge, fill, h, STATUSES, TERMINAL, time } from './dom.js';

/**
 * Streams one page keeps open: a browser gives a host six connections, the rest stay free (for
 * the polls of the other unfinished rows, and the user's own requests).
 */
const MAX_LIVE = 4;
const FILTERS = [
  ['status', 'Status'],
  ['type', 'Type'],
  ['tag', 'Tag'],
  ['schedule', 'Schedule id'],
];

/** Renders the list into `main` for the address' filters; streams end when `signal` aborts. */
export async function renderList(main, params, signal) {
  const heading = h('h1', { tabindex: -1 }, 'Tasks');
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading…');
  const body = h('div', { class: 'list' });
  fill(main, heading, filterForm(params), status, body);
  const query = new URLSearchParams({ limit: '20' });
  for (const [name] of FILTERS) {
    const value = params.get(name);
    if (value) query.set(name === 'schedule' ? 'scheduleId' : name, value);
  }
  const cursor = params.get('cursor');
  if (cursor) query.set('cursor', cursor);
  const page = await api('GET', `/v1/jobs?${query}`);
  const filtered = FILTERS.some(([name]) => params.get(name));
  status.textContent = `${page.tasks.length} task${page.tasks.length === 1 ? '' : 's'}${filtered ? ' matching the filters' : ''}${cursor ? ' on this page' : ''}.`;
  if (page.tasks.length === 0) return heading;
  const rows = new Map(page.tasks.map((task) => [task.taskId, row(task)]));
  fill(
    body,
    h(
      'table',
      { class: 'tasks' },
      h('caption', { class: 'visually-hidden' }, 'Tasks, newest first'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Task', 'Status', 'Tags', 'Updated', 'Message'].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        {},
        [...rows.values()].map((r) => r.el),
      ),
    ),
    pager(params, page.nextCursor),
  );
  const unfinished = page.tasks.filter((t) => !TERMINAL.has(t.status));
  unfinished.forEach((task, i) => {
    const shown = rows.get(task.taskId);
    const keep =
      i < MAX_LIVE ? follow(task.taskId, shown.update, signal) : poll(task, shown.update, signal);
    keep.catch(() => undefined);
  });
  return heading;
}

function filterForm(params) {
  const controls = FILTERS.map(([name, label]) => {
    const id = `filter-${name}`;
    const input =
      name === 'status'
        ? h(
            'select',
            { id, name },
            h('option', { value: '' }, 'any'),
            STATUSES.map((s) =>
              h('option', { value: s, selected: params.get(name) === s }, s.replace('_', ' ')),
            ),
          )
        : h('input', {
            id,
            name,
            type: 'search',
            value: params.get(name) ?? '',
            autocomplete: 'off',
            spellcheck: 'false',
          });
    return h('div', { class: 'field' }, h('label', { for: id }, label), input);
  });
  const form = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Filter tasks',
      novalidate: true,
      onsubmit(event) {
        event.preventDefault();
        const next = new URLSearchParams();
        for (const [name] of FILTERS) {
          const value = form.elements[name].value.trim();
          if (value) next.set(name, value);
        }
        location.hash = `#/?${next}`;
      },
    },
    controls,
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'submit' }, 'Apply filters'),
      h('a', { href: '#/', class: 'button secondary' }, 'Clear'),
    ),
  );
  return form;
}

function row(task) {
  const statusCell = h('td', { 'data-label': 'Status' });
  const updated = h('td', { 'data-label': 'Updated' });
  const message = h('td', { 'data-label': 'Message' });
  const el = h(
    'tr',
    { 'data-task-id': task.taskId },
    h(
      'td',
      { 'data-label': 'Task' },
      h(
        'a',
        { href: `#/task/${task.taskId}` },
        h('span', { class: 'type' }, task.type),
        ' ',
        h('code', {}, task.taskId.slice(0, 8)),
      ),
    ),
    statusCell,
    h(
      'td',
      { 'data-label': 'Tags' },
      (task.tags ?? []).map((t) => h('span', { class: 'tag' }, t)),
    ),
    updated,
    message,
  );
  const update = (handle) => {
    const changed = el.dataset.status && el.dataset.status !== handle.status;
    el.dataset.status = handle.status;
    fill(statusCell, badge(handle.status));
    fill(updated, time(handle.lastUpdatedAt));
    fill(message, handle.statusMessage);
    if (changed)
      announce(`${handle.type} ${handle.taskId.slice(0, 8)} is ${handle.status.replace('_', ' ')}`);
  };
  update(task);
  return { el, update };
}

function pager(params, nextCursor) {
  const links = [];
  if (params.get('cursor')) {
    const first = new URLSearchParams(params);
    first.delete('cursor');
    links.push(h('a', { href: `#/?${first}`, class: 'button secondary' }, 'First page'));
  }
  if (nextCursor) {
    const next = new URLSearchParams(params);
    next.set('cursor', nextCursor);
    links.push(h('a', { href: `#/?${next}`, class: 'button secondary', rel: 'next' }, 'Next page'));
  }
  return links.length ? h('nav', { class: 'row pager', 'aria-label': 'Pages' }, links) : null;
}
