// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by origin (longrun's
// own code, each npm package, node internals, GC), optionally within a time window.
//
//   node bench/profile-summary.mjs <file.cpuprofile> [top]
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SPECIAL = new Set(['(root)', '(program)', '(idle)', '(garbage collector)']);

/** Where a function comes from: 'longrun', an npm package name, 'node' (internals) or a V8 marker. */
export function originOf(functionName, url) {
  if (SPECIAL.has(functionName)) return functionName;
  if (!url) return '(native/V8)';
  if (url.startsWith('node:') || !url.includes('/')) return 'node';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (/\/(apps|packages)\/[^/]+\//.test(url)) return 'longrun';
  return 'other';
}

function shortUrl(url) {
  const m = /\/(apps|packages)\/(.*)$/.exec(url) ?? /\/node_modules\/(.*)$/.exec(url);
  return m ? m[0].replace(/^\//, '').replace(/^node_modules\//, '') : url.replace(/^file:\/\//, '');
}

/**
 * @param profile parsed .cpuprofile
 * @param window optional {fromUs, toUs} on the profile's clock (CLOCK_MONOTONIC µs on Linux, the
 *   same clock as process.hrtime), to keep only the samples taken under load
 */
export function summarise(profile, { top = 15, window } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const self = new Map(); // key -> {ms, origin, name, where}
  const inclusive = new Map();
  const origins = new Map();
  // Self time charged to the nearest caller that is not node or V8: "node:net writes on behalf of
  // ioredis" count for ioredis.
  const responsible = new Map();
  const leafBy = new Map(); // leaf key -> Map(responsible origin -> us)
  let t = profile.startTime;
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    const node = byId.get(profile.samples[i]);
    if (!node) continue;
    totalUs += delta;
    const { functionName, url, lineNumber } = node.callFrame;
    const origin = originOf(functionName, url);
    origins.set(origin, (origins.get(origin) ?? 0) + delta);
    const key = `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`;
    const entry = self.get(key) ?? { us: 0, origin, key };
    entry.us += delta;
    self.set(key, entry);
    let owner = origin;
    for (
      let id = node.id;
      id !== undefined && (owner === 'node' || owner === '(native/V8)');
      id = parent.get(id)
    ) {
      const frame = byId.get(id).callFrame;
      owner = originOf(frame.functionName, frame.url);
    }
    if (owner === '(root)') owner = origin;
    responsible.set(owner, (responsible.get(owner) ?? 0) + delta);
    const leaf = leafBy.get(key) ?? new Map();
    leaf.set(owner, (leaf.get(owner) ?? 0) + delta);
    leafBy.set(key, leaf);
    // Inclusive time of longrun functions: each function once per sample, however deep.
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id).callFrame;
      if (originOf(frame.functionName, frame.url) !== 'longrun') continue;
      const k = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + delta);
    }
  }
  const pct = (us) => (totalUs ? (100 * us) / totalUs : 0);
  const busyUs = totalUs - (origins.get('(idle)') ?? 0);
  const rows = (entries) =>
    entries.map(([key, us]) => ({
      key,
      ms: us / 1000,
      pct: pct(us),
      pctBusy: busyUs ? (100 * us) / busyUs : 0,
    }));
  return {
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    byOrigin: rows([...origins].sort((a, b) => b[1] - a[1])),
    byResponsible: rows([...responsible].sort((a, b) => b[1] - a[1])),
    topSelf: [...self.values()]
      .filter((e) => !SPECIAL.has(e.origin))
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((e) => ({
        ...rows([[e.key, e.us]])[0],
        origin: e.origin,
        callers:
          e.origin === 'node' || e.origin === '(native/V8)'
            ? [...leafBy.get(e.key)]
                .sort((a, b) => b[1] - a[1])
                .slice(0, 3)
                .map(([o, us]) => `${o} ${Math.round((100 * us) / e.us)}%`)
                .join(', ')
            : '',
      })),
    topLongrunSelf: rows(
      [...self.values()]
        .filter((e) => e.origin === 'longrun')
        .sort((a, b) => b.us - a.us)
        .slice(0, top)
        .map((e) => [e.key, e.us]),
    ),
    topLongrunInclusive: rows([...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)),
  };
}

/** Plain-text rendering of a summary (also used inside docs/BENCHMARKS.md). */
export function render(summary, title) {
  const lines = [
    `${title}: ${summary.totalMs.toFixed(0)} ms sampled, ${summary.busyMs.toFixed(0)} ms busy`,
  ];
  const table = (name, rows, withOrigin) => {
    lines.push('', `${name}`);
    for (const r of rows) {
      lines.push(
        `  ${r.pctBusy.toFixed(1).padStart(5)}%  ${r.ms.toFixed(0).padStart(6)} ms  ${withOrigin ? `[${r.origin}] ` : ''}${r.key}${r.callers ? `  (for: ${r.callers})` : ''}`,
      );
    }
  };
  const head = (xs) => xs.filter((r) => r.key !== '(idle)').slice(0, 12);
  table('self time by origin (% of busy time), top 12', head(summary.byOrigin));
  table(
    'the same, node internals and V8 natives charged to the package (or longrun) that called them',
    head(summary.byResponsible),
  );
  table('top functions by self time', summary.topSelf, true);
  table('longrun code, self time', summary.topLongrunSelf);
  table('longrun code, inclusive time (self + callees)', summary.topLongrunInclusive);
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/profile-summary.mjs <file.cpuprofile> [top] [from-function]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  // A third argument names a function: only samples from its first appearance on are counted
  // (e.g. `moveToFinished`, to leave a worker's start-up out).
  const from = process.argv[4];
  console.log(
    render(
      summarise(profile, {
        top: Number(process.argv[3] ?? 15),
        ...(from ? { window: { fromUs: firstSampleOf(profile, from), toUs: Infinity } } : {}),
      }),
      fileURLToPath(pathToFileURL(file)),
    ),
  );
}

/** The time (profile clock, us) of the first sample with `name` on its stack. */
function firstSampleOf(profile, name) {
  const parent = new Map();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      if (byId.get(id)?.callFrame.functionName === name) return t;
    }
  }
  throw new Error(`no sample of ${name}`);
}
