// One task: its status, progress, message, tags, trace id, input, outcome and event timeline,
// followed live (SSE from event 0: the whole history, then each change); the question's form
// when it waits for input; cancel, delete and replay.
import { api, ApiError, follow } from './api.js';
import { announce, badge, fill, h, json, TERMINAL, time } from './dom.js';
import { answerForm } from './form.js';
import { validate } from './validate.js';

/** Renders task `id` into `main`; its stream ends when `signal` aborts. */
export async function renderTask(main, id, signal) {
  let task = await api('GET', `/v1/jobs/${encodeURIComponent(id)}?include=input`);
  const heading = h('h1', { tabindex: -1 }, `Task `, h('span', { class: 'type' }, task.type));
  const facts = h('dl', { class: 'facts' });
  const actions = h('div', { class: 'row actions' });
  const question = h('section', { 'aria-labelledby': 'question-title', hidden: true });
  const outcome = h('section', { 'aria-labelledby': 'outcome-title', hidden: true });
  const timeline = h('ol', { class: 'timeline', 'aria-label': 'Events, oldest first' });
  const message = h('p', { class: 'notice', role: 'alert', hidden: true });
  fill(
    main,
    h('p', {}, h('a', { href: '#/' }, '← All tasks')),
    heading,
    message,
    facts,
    actions,
    question,
    outcome,
    h(
      'section',
      { 'aria-labelledby': 'input-title' },
      h('h2', { id: 'input-title' }, 'Input'),
      json(task.input ?? {}, 'Input'),
    ),
    h(
      'section',
      { 'aria-labelledby': 'events-title' },
      h('h2', { id: 'events-title' }, 'Events'),
      timeline,
    ),
  );
  const say = (text, isError = false) => {
    message.textContent = text;
    message.hidden = !text;
    message.classList.toggle('error', isError);
  };
  let shownQuestion = null;
  const render = () => {
    renderFacts(facts, task);
    renderActions(actions, task, act);
    renderOutcome(outcome, task);
    const key = task.status === 'input_required' ? JSON.stringify(task.inputRequest) : null;
    // The form is made again only for a new question: typing is never lost to a progress event.
    if (key !== shownQuestion) {
      shownQuestion = key;
      renderQuestion(question, task, answer);
    }
  };
  const refresh = async () => {
    task = { ...(await api('GET', `/v1/jobs/${encodeURIComponent(id)}`)), input: task.input };
    render();
  };
  const act = async (what) => {
    say('');
    try {
      if (what === 'cancel') {
        task = { ...(await api('POST', `/v1/jobs/${id}/cancel`)), input: task.input };
        render();
        announce('Task cancelled');
      } else if (what === 'delete') {
        await api('DELETE', `/v1/jobs/${id}`);
        announce('Task deleted');
        location.hash = '#/';
      } else if (what === 'replay') {
        const replay = await api('POST', `/v1/jobs/${id}/replay`);
        announce('Replayed as a new task');
        location.hash = `#/task/${replay.taskId}`;
      }
    } catch (error) {
      say(error instanceof ApiError ? error.message : String(error), true);
    }
  };
  const answer = async (form, schema) => {
    const value = form.read();
    const problems = validate(schema, value);
    form.show(problems);
    if (problems.length > 0) return;
    try {
      task = {
        ...(await api('POST', `/v1/jobs/${id}/input`, { input: value })),
        input: task.input,
      };
      announce('Answer sent');
      render();
    } catch (error) {
      if (error instanceof ApiError && error.errors.length > 0) form.show(error.errors);
      else say(error instanceof ApiError ? error.message : String(error), true);
    }
  };
  render();
  let pending;
  follow(
    id,
    (handle, eventId) => {
      timeline.append(event(handle, eventId));
      // A burst (the history first) is read once, after it: the handle is fetched whole again
      // when the status moved, else the live fields are laid over the one shown.
      clearTimeout(pending);
      pending = setTimeout(() => {
        const moved = handle.status !== task.status;
        if (moved) announce(`The task is ${handle.status.replace('_', ' ')}`);
        if (moved || TERMINAL.has(handle.status)) refresh().catch(() => undefined);
        else {
          task = {
            ...task,
            progress: handle.progress,
            statusMessage: handle.statusMessage,
            lastUpdatedAt: handle.lastUpdatedAt,
          };
          renderFacts(facts, task);
        }
      }, 50);
    },
    signal,
    '0',
  ).catch((error) => say(`Live updates stopped: ${error.message}`, true));
  return heading;
}

function renderFacts(dl, task) {
  const rows = [
    ['Status', badge(task.status)],
    ['Message', task.statusMessage || '—'],
    ['Progress', progress(task.progress)],
    ['Task id', h('code', {}, task.taskId)],
    ['Type', task.type],
    ['Tags', task.tags?.length ? task.tags.map((t) => h('span', { class: 'tag' }, t)) : null],
    ['Trace id', task.traceId ? h('code', { class: 'trace' }, task.traceId) : null],
    [
      'Replay of',
      task.replayOf
        ? h('a', { href: `#/task/${task.replayOf}` }, h('code', {}, task.replayOf))
        : null,
    ],
    ['Schedule', task.scheduleId ? h('code', {}, task.scheduleId) : null],
    ['Parent task', task.parentTaskId ? taskLink(task.parentTaskId) : null],
    [
      'Child tasks',
      task.childTaskIds?.length
        ? h('ol', { class: 'children' }, ...task.childTaskIds.map((c) => h('li', {}, taskLink(c))))
        : null,
    ],
    [
      'Steps',
      task.steps?.length
        ? h(
            'ol',
            { class: 'steps' },
            ...task.steps.map((s) =>
              h(
                'li',
                {},
                h('code', {}, s.name),
                ` ${s.status}`,
                s.until ? [' until ', time(s.until)] : null,
                s.endedAt ? [', ', time(s.endedAt)] : null,
              ),
            ),
            // The handle holds the newest 50 (issue 40): say how many there are in all.
            task.stepCount > task.steps.length
              ? h('li', { class: 'more' }, `the newest ${task.steps.length} of ${task.stepCount}`)
              : null,
          )
        : null,
    ],
    ['Created', time(task.createdAt)],
    ['Updated', time(task.lastUpdatedAt)],
  ];
  fill(
    dl,
    rows
      .filter(([, v]) => v !== null)
      .map(([k, v]) => h('div', { 'data-fact': k }, h('dt', {}, k), h('dd', {}, v))),
  );
}

/** A link to another task's page (a durable task's parent or children, issue 29). */
function taskLink(id) {
  return h('a', { href: `#/task/${id}` }, h('code', {}, id));
}

function progress(value) {
  if (value === undefined) return '—';
  if (typeof value === 'number') {
    return h(
      'span',
      {},
      h('progress', { max: 100, value, 'aria-label': 'Progress' }),
      ` ${Math.round(value)}%`,
    );
  }
  return json(value, 'Progress');
}

function renderActions(el, task, act) {
  // Made again only when they change (cancel becomes delete): a button never vanishes under
  // the keyboard's focus because an event came in. One that had the focus passes it on.
  const mode = TERMINAL.has(task.status) ? 'finished' : 'running';
  if (el.dataset.mode === mode) return;
  const hadFocus = el.contains(document.activeElement);
  el.dataset.mode = mode;
  const button = (what, label, extra = {}) =>
    h('button', { type: 'button', onclick: () => act(what), ...extra }, label);
  fill(
    el,
    mode === 'finished'
      ? button('delete', 'Delete', { class: 'danger' })
      : button('cancel', 'Cancel task', { class: 'danger' }),
    button('replay', 'Replay', { class: 'secondary' }),
  );
  if (hadFocus) el.querySelector('button').focus();
}

function renderOutcome(section, task) {
  section.hidden = !TERMINAL.has(task.status);
  if (section.hidden) return section.replaceChildren();
  fill(
    section,
    h('h2', { id: 'outcome-title' }, task.status === 'completed' ? 'Result' : 'Error'),
    task.status === 'completed'
      ? json(task.result ?? null, 'Result')
      : json(task.error ?? null, 'Error'),
  );
}

function renderQuestion(section, task, answer) {
  const request = task.status === 'input_required' ? task.inputRequest : undefined;
  section.hidden = !request;
  if (!request) return section.replaceChildren();
  const form = answerForm(request.schema);
  const el = h(
    'form',
    {
      class: 'answer',
      novalidate: true,
      'aria-labelledby': 'question-title',
      onsubmit(event) {
        event.preventDefault();
        answer(form, request.schema);
      },
    },
    form.element,
    h('button', { type: 'submit' }, 'Send answer'),
  );
  fill(
    section,
    h('h2', { id: 'question-title' }, 'Answer'),
    h('p', { class: 'question' }, request.message),
    el,
  );
}

function event(handle, eventId) {
  const detail = typeof handle.progress === 'number' ? ` (${Math.round(handle.progress)}%)` : '';
  return h(
    'li',
    {},
    h('span', { class: 'event-id' }, `#${eventId ?? '?'}`),
    ' ',
    badge(handle.status),
    ' ',
    `${handle.statusMessage}${detail}`,
    ' ',
    time(handle.lastUpdatedAt),
  );
}
