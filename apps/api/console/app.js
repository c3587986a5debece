// The console's entry: sign-in (the tenant's key, kept in sessionStorage for this tab only),
// and the two views by address: `#/?filters` (the list) and `#/task/<id>` (one task).
import { api, ApiError, session } from './api.js';
import { fill, h } from './dom.js';
import { renderList } from './list.js';
import { renderTask } from './task.js';

const main = document.getElementById('main');
const signOut = document.getElementById('sign-out');
let view;

signOut.addEventListener('click', () => {
  session.clear();
  location.hash = '#/';
  route();
});
window.addEventListener('hashchange', route);
route();

async function route(notice) {
  view?.abort();
  view = new AbortController();
  const signal = view.signal;
  signOut.hidden = !session.key;
  if (!session.key) return signIn(notice);
  const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
  const task = /^\/task\/([0-9A-Za-z-]{1,128})$/.exec(path);
  try {
    const heading = task
      ? await renderTask(main, task[1], signal)
      : await renderList(main, new URLSearchParams(query), signal);
    // After a navigation, the new view's heading has the focus (screen readers announce it).
    if (!signal.aborted && notice !== 'keep') heading?.focus();
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof ApiError && error.status === 401) {
      session.clear();
      return route('The API no longer accepts this key: sign in again.');
    }
    const text =
      error instanceof ApiError && error.status === 404
        ? 'No such task (it may have expired or been deleted).'
        : `Could not load this page: ${error.message}`;
    const heading = h('h1', { tabindex: -1 }, 'Not shown');
    fill(
      main,
      heading,
      h('p', { role: 'alert' }, text),
      h('p', {}, h('a', { href: '#/' }, 'All tasks')),
    );
    heading.focus();
  }
}

function signIn(notice) {
  const input = h('input', {
    id: 'api-key',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'key-hint key-error',
  });
  const error = h('p', { id: 'key-error', class: 'field-error', role: 'alert' }, notice ?? '');
  const form = h(
    'form',
    {
      class: 'sign-in',
      novalidate: true,
      async onsubmit(event) {
        event.preventDefault();
        const key = input.value.trim();
        if (!key) {
          error.textContent = 'Enter your API key.';
          return input.focus();
        }
        session.set(key);
        try {
          await api('GET', '/v1/jobs?limit=1');
          route();
        } catch (failure) {
          session.clear();
          error.textContent =
            failure instanceof ApiError && failure.status === 401
              ? 'The API did not accept this key.'
              : `Could not reach the API: ${failure.message}`;
          input.focus();
        }
      },
    },
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'api-key' }, 'API key'),
      h(
        'p',
        { id: 'key-hint', class: 'hint' },
        "Your tenant's key. It stays in this tab (sessionStorage) and is sent only to this API.",
      ),
      input,
      error,
    ),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  const heading = h('h1', { tabindex: -1 }, 'Sign in');
  fill(main, heading, form);
  input.focus();
}
