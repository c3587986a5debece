// A form made from a question's JSON Schema (`inputRequest.schema`): strings (with their
// formats), numbers with bounds, booleans, enums, nested objects and arrays, each with a label,
// a hint naming its limits, and a place for its errors. Anything else is typed as JSON.
// A schema comes from a worker and the API takes any within its size caps, so the form is
// bounded whatever it says (issue 41, item 9): past `LIMITS`, a part is one JSON text area.
import { h } from './dom.js';

/**
 * The most a form draws: `parts` (fields and groups) in all, groups `depth` deep, lists made
 * with at most `items` items at first (`minItems`), selects of at most `options` choices.
 */
export const LIMITS = { parts: 100, depth: 4, items: 20, options: 200 };

let seq = 0;
const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * The form's element, `read()` (the answer as typed) and `show(errors)` (the API's
 * `{path, message}` pairs, paths from `input`).
 * @example const form = answerForm(request.schema); form.show(validate(request.schema, form.read()))
 */
export function answerForm(schema) {
  const fields = new Map();
  const root = control(schema, 'input', 'Answer', true, { fields, left: LIMITS.parts }, 0);
  const summary = h('div', { class: 'error-summary', role: 'alert', hidden: true, tabindex: -1 });
  return {
    element: h('div', { class: 'answer-fields' }, summary, root.el),
    read: () => root.read(),
    show(errors) {
      for (const field of fields.values()) field.clear();
      summary.replaceChildren();
      summary.hidden = errors.length === 0;
      if (errors.length === 0) return;
      summary.append(
        h(
          'p',
          {},
          errors.length === 1
            ? 'The answer has a problem:'
            : `The answer has ${errors.length} problems:`,
        ),
        h(
          'ul',
          {},
          errors.map((e) => h('li', {}, `${label(e.path)}: ${e.message}`)),
        ),
      );
      let first;
      for (const error of errors) {
        const field = fields.get(target(error, fields));
        if (!field) continue;
        field.add(error.message);
        first ??= field;
      }
      (first ? first.focus : () => summary.focus())();
    },
  };
}

/** The field an error belongs to: a missing property's own, else the nearest known path. */
function target(error, fields) {
  const missing = /^must have required property '(.+)'$/.exec(error.message);
  let path = missing ? `${error.path}.${missing[1]}` : error.path;
  while (!fields.has(path) && path.includes('.')) path = path.slice(0, path.lastIndexOf('.'));
  return path;
}

const label = (path) => (path === 'input' ? 'answer' : path.replace(/^input\./, ''));

function typeOf(schema) {
  const types = [].concat(schema.type ?? []);
  return types.find((t) => t !== 'null') ?? (schema.properties ? 'object' : undefined);
}

/** What a field's limits are, in words (shown under its label). */
function hint(s) {
  const parts = [];
  if (s.description) parts.push(s.description);
  if (s.format) parts.push(`format: ${s.format}`);
  if (typeof s.minimum === 'number' && typeof s.maximum === 'number')
    parts.push(`${s.minimum} to ${s.maximum}`);
  else if (typeof s.minimum === 'number') parts.push(`at least ${s.minimum}`);
  else if (typeof s.maximum === 'number') parts.push(`at most ${s.maximum}`);
  if (typeOf(s) === 'integer') parts.push('a whole number');
  if (typeof s.minLength === 'number' && s.minLength > 0)
    parts.push(`at least ${s.minLength} characters`);
  if (typeof s.maxLength === 'number') parts.push(`at most ${s.maxLength} characters`);
  if (typeof s.maxItems === 'number') parts.push(`at most ${s.maxItems} items`);
  if (typeof s.minItems === 'number' && s.minItems > 0) parts.push(`at least ${s.minItems} items`);
  return parts.join('; ');
}

/**
 * How many parts `s` draws at `depth` (a field or a group: 1 each; a part drawn as JSON: 1),
 * counting no further than `cap` (a schema as wide as its size cap allows costs little to size).
 */
function cost(s, depth, cap) {
  if (!s || typeof s !== 'object' || asJson(s, depth)) return 1;
  const type = typeOf(s);
  if (type === 'object') {
    let n = 1;
    for (const sub of Object.values(s.properties ?? {})) {
      n += cost(sub, depth + 1, cap - n);
      if (n > cap) break;
    }
    return n;
  }
  if (type === 'array' && s.items && typeof s.items === 'object')
    return 1 + Math.max(1, minItems(s)) * cost(s.items, depth + 1, cap);
  return 1;
}

/** Whether `s` is beyond the form's bounds whatever the room left: typed as JSON. */
function asJson(s, depth) {
  if (Array.isArray(s.enum)) return s.enum.length > LIMITS.options;
  const type = typeOf(s);
  if (type !== 'object' && type !== 'array') return false;
  if (depth > LIMITS.depth) return true;
  if (type === 'object') return Object.keys(s.properties ?? {}).length >= LIMITS.parts;
  return minItems(s) > LIMITS.items;
}

/** A list's `minItems` as a count (a schema may say anything: `"1e8"` is not made 10⁸ times). */
const minItems = (s) =>
  typeof s.minItems === 'number' && s.minItems > 0 ? Math.ceil(s.minItems) : 0;

/** `s` drawn at `path`, taking its parts from `ctx.left` (the room left in the form). */
function control(schema, path, name, required, ctx, depth) {
  const s = schema && typeof schema === 'object' ? schema : {};
  const { fields } = ctx;
  const top = depth === 0;
  const id = `f${++seq}`;
  const text = hint(s);
  const hintEl = text ? h('p', { class: 'hint', id: `${id}-hint` }, text) : null;
  const errorEl = h('ul', { class: 'field-error', id: `${id}-error`, hidden: true });
  const describedby = [hintEl && `${id}-hint`, `${id}-error`].filter(Boolean).join(' ');
  const title = `${s.title ?? name}${required && !top ? '' : top ? '' : ' (optional)'}`;
  const register = (input) =>
    fields.set(path, {
      focus: () => input.focus(),
      clear() {
        errorEl.replaceChildren();
        errorEl.hidden = true;
        input.removeAttribute('aria-invalid');
      },
      add(message) {
        errorEl.append(h('li', {}, message));
        errorEl.hidden = false;
        input.setAttribute('aria-invalid', 'true');
      },
    });
  const labelled = (input) =>
    h(
      'div',
      { class: 'field', 'data-path': path },
      h('label', { for: id }, title),
      hintEl,
      input,
      errorEl,
    );
  const type = typeOf(s);
  // Too big to draw anywhere, or more than the room left: one part, typed as JSON. An object
  // needs a part for each property (each takes what it needs of the room left when drawn).
  const room = ctx.left;
  const properties = Object.entries(s.properties ?? {});
  const need = asJson(s, depth)
    ? Infinity
    : type === 'object'
      ? 1 + properties.length
      : cost(s, depth, room);
  ctx.left -= 1;
  if (need > room) return jsonArea(id, describedby, labelled, register, true);

  if (Array.isArray(s.enum)) {
    const select = h(
      'select',
      { id, 'aria-describedby': describedby },
      h('option', { value: '' }, required ? 'Choose…' : '(none)'),
      s.enum.map((v, i) =>
        h('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v)),
      ),
    );
    register(select);
    return {
      el: labelled(select),
      read: () => (select.value === '' ? undefined : s.enum[Number(select.value)]),
    };
  }
  if (type === 'boolean') {
    const box = h('input', { type: 'checkbox', id, 'aria-describedby': describedby });
    register(box);
    const el = h(
      'div',
      { class: 'field check', 'data-path': path },
      box,
      h('label', { for: id }, title),
      hintEl,
      errorEl,
    );
    return { el, read: () => box.checked };
  }
  if (type === 'object') {
    const needed = new Set(Array.isArray(s.required) ? s.required : []);
    const parts = properties.map(([key, sub], i) => {
      // A part kept for each property after this one, so each has at least a JSON text area.
      const kept = properties.length - i - 1;
      ctx.left -= kept;
      const part = control(sub, `${path}.${key}`, key, needed.has(key), ctx, depth + 1);
      ctx.left += kept;
      return [key, part];
    });
    const legend = top ? null : h('legend', {}, title);
    const group = h(
      'fieldset',
      { class: top ? 'group top' : 'group', id, tabindex: -1, 'aria-describedby': describedby },
      legend,
      hintEl,
      parts.map(([, p]) => p.el),
      errorEl,
    );
    register(group);
    return {
      el: group,
      read() {
        const value = {};
        for (const [key, part] of parts) {
          const v = part.read();
          if (v !== undefined) value[key] = v;
        }
        return value;
      },
    };
  }
  if (type === 'array' && s.items && typeof s.items === 'object')
    return arrayControl(s, path, title, { id, hintEl, errorEl, describedby }, ctx, depth, {
      register,
      required,
    });
  if (type === 'string') {
    const long = s.maxLength === undefined || s.maxLength > 200;
    const inputType = { email: 'email', uri: 'url', date: 'date' }[s.format] ?? 'text';
    const input =
      long && inputType === 'text' && !s.format && !s.pattern
        ? h('textarea', { id, rows: 3, 'aria-describedby': describedby })
        : h('input', { type: inputType, id, autocomplete: 'off', 'aria-describedby': describedby });
    register(input);
    return {
      el: labelled(input),
      read: () => (input.value === '' && !required ? undefined : input.value),
    };
  }
  if (type === 'number' || type === 'integer') {
    const input = h('input', {
      type: 'text',
      inputmode: type === 'integer' ? 'numeric' : 'decimal',
      id,
      autocomplete: 'off',
      'aria-describedby': describedby,
    });
    register(input);
    const read = () => {
      const raw = input.value.trim();
      if (raw === '') return undefined;
      // Not a number: sent as typed, so the message is the API's ("must be integer").
      return NUMBER.test(raw) ? Number(raw) : raw;
    };
    return { el: labelled(input), read };
  }
  return jsonArea(id, describedby, labelled, register, false);
}

/** A part typed as JSON (`bounded`: one the form's `LIMITS` left undrawn, which says so). */
function jsonArea(id, describedby, labelled, register, bounded) {
  const area = h('textarea', { id, rows: 4, 'aria-describedby': describedby, class: 'mono' });
  register(area);
  const read = () => {
    if (area.value.trim() === '') return undefined;
    try {
      return JSON.parse(area.value);
    } catch {
      return area.value;
    }
  };
  const note = bounded ? h('p', { class: 'hint' }, 'Typed as JSON (too large a form).') : null;
  return { el: labelled(h('div', {}, note, area)), read };
}

function arrayControl(s, path, title, { id, hintEl, errorEl, describedby }, ctx, depth, how) {
  const { fields } = ctx;
  const { register, required } = how;
  const items = [];
  const list = h('ol', { class: 'items' });
  let first = true;
  const add = () => {
    const i = items.length;
    // The first items (`minItems`) were counted in the form's room; each added later has a
    // form's room of its own (one a click).
    const room = first ? ctx : { fields, left: LIMITS.parts };
    const part = control(s.items, `${path}.${i}`, `Item ${i + 1}`, true, room, depth + 1);
    const li = h('li', {}, part.el);
    items.push({ part, li, path: `${path}.${i}` });
    list.append(li);
    sync();
    li.querySelector('input, select, textarea')?.focus();
  };
  const removeLast = () => {
    const last = items.pop();
    if (!last) return;
    last.li.remove();
    for (const key of [...fields.keys()])
      if (key === last.path || key.startsWith(`${last.path}.`)) fields.delete(key);
    sync();
    addButton.focus();
  };
  const addButton = h(
    'button',
    { type: 'button', onclick: add },
    `Add ${title.replace(' (optional)', '')} item`,
  );
  const removeButton = h('button', { type: 'button', onclick: removeLast }, 'Remove last item');
  const sync = () => {
    removeButton.hidden = items.length === 0;
  };
  for (let i = 0; i < minItems(s); i++) add();
  first = false;
  sync();
  const group = h(
    'fieldset',
    { class: 'group', id, tabindex: -1, 'aria-describedby': describedby },
    h('legend', {}, title),
    hintEl,
    list,
    h('div', { class: 'row' }, addButton, removeButton),
    errorEl,
  );
  register(group);
  // An optional list left empty is left out, as an optional field left blank.
  return {
    el: group,
    read: () =>
      items.length === 0 && !required ? undefined : items.map((item) => item.part.read()),
  };
}
