// Writes docs/BENCHMARKS.md again from a run's saved results, e.g. after editing
// bench/analysis.md, without measuring anything.
//
//   node bench/run.mjs --json=results.json   # once
//   node bench/render-docs.mjs results.json
import { readFileSync } from 'node:fs';
import { writeDocs } from './lib/markdown.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/render-docs.mjs <results.json written by bench/run.mjs --json>');
  process.exit(2);
}
writeDocs(JSON.parse(readFileSync(file, 'utf8')));
