// Formatting: numbers, the console table and docs/BENCHMARKS.md.

export const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** 1234.5 → "1 235"; small numbers keep `digits` decimals. */
export function num(x, digits = 0) {
  if (!Number.isFinite(x)) return 'n/a';
  const fixed = x.toFixed(digits);
  const [int, frac] = fixed.split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
  return frac ? `${grouped}.${frac}` : grouped;
}

export const ms = (x) =>
  Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms` : 'n/a';
export const ratio = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');
export const verdict = (pass) =>
  pass === null || pass === undefined ? 'info' : pass ? 'PASS' : 'FAIL';

const COLUMNS = [
  ['#', (r) => r.id],
  ['figure', (r) => r.name],
  ['longrun', (r) => r.value],
  ['ceiling / reference', (r) => r.ceiling ?? ''],
  ['ratio', (r) => (r.ratio === undefined ? '' : ratio(r.ratio))],
  ['goal', (r) => r.goal ?? ''],
  ['result', (r) => verdict(r.pass)],
];

/** Fixed-width table for the terminal. */
export function textTable(rows) {
  const cells = rows.map((r) => COLUMNS.map(([, f]) => String(f(r))));
  const widths = COLUMNS.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (cs) => cs.map((c, i) => c.padEnd(widths[i])).join('  ');
  return [
    line(COLUMNS.map(([h]) => h)),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.map(line),
  ].join('\n');
}

export function markdownTable(header, rows) {
  const esc = (c) => String(c).replace(/\|/g, '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

export function figuresMarkdown(rows) {
  return markdownTable(
    COLUMNS.map(([h]) => h),
    rows.map((r) => COLUMNS.map(([, f]) => f(r))),
  );
}
