// The one place text reaches the page: h() and put() make elements and text
// nodes, never HTML, so a task name or an error message holding <script>
// shows as text. Nothing else in the page writes markup (no innerHTML).

/** An element with attributes (on* keys take listeners) and children (strings become text nodes). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** Replaces an element's children. */
export function put(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** A table: header names, then rows of cells (a cell is text, a node, or [attrs, ...children]). */
export function table(header, rows, attrs) {
  return h(
    'table',
    attrs,
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        header.map((name) => h('th', null, name)),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map((row) =>
        row instanceof Node
          ? row
          : h(
              'tr',
              null,
              row.map((cell) => h('td', null, cell)),
            ),
      ),
    ),
  );
}

export function bytes(n) {
  if (typeof n !== 'number') return '-';
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function ms(n) {
  if (typeof n !== 'number') return '-';
  return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`;
}

export function time(at) {
  return typeof at === 'number' ? new Date(at).toISOString().replace('T', ' ').slice(0, 23) : '-';
}

/** JSON for people, cut at `max` characters. */
export function json(value, max = 80) {
  const text = value === undefined ? '-' : JSON.stringify(value);
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}
