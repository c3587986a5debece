// Small DOM helpers: elements are built with textContent only (never innerHTML), so nothing a
// task carries (its input, result or messages) is ever read as markup.

/**
 * An element with attributes (`on*` functions become listeners) and children (strings are text).
 * @example h('button', { type: 'button', onclick: go }, 'Go')
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function')
      el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else if (name in el && typeof value !== 'string') el[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** JSON, indented, in a `<pre>` that keeps long lines scrollable on a phone. */
export function json(value, label) {
  return h(
    'pre',
    { class: 'json', tabindex: 0, 'aria-label': label },
    JSON.stringify(value, null, 2),
  );
}

/** Says `text` to screen readers (the page's polite live region). */
export function announce(text) {
  const region = document.getElementById('announce');
  region.textContent = '';
  // A new text node on the next frame, so the same words twice are announced twice.
  requestAnimationFrame(() => (region.textContent = text));
}

/** A time as the reader's locale writes it, with the ISO value for machines. */
export function time(iso) {
  return h('time', { datetime: iso }, new Date(iso).toLocaleString());
}

/** A status as a badge: its word, never its colour alone. */
export function badge(status) {
  return h('span', { class: `badge s-${status}` }, status.replace('_', ' '));
}

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
export const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
