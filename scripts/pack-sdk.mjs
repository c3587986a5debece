// `npm run pack:sdk`: packs the publishable packages into .packs/ (or the directory given as the
// first argument), as `npm publish` would ship them: the worker SDK and the packages it depends on
// (@longrun/core, @longrun/engine, @longrun/worker) and the API client (@longrun/client, which
// needs only @longrun/core). Run after `npm run build`. Prints the tarballs' paths.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

const PACKAGES = ['@longrun/core', '@longrun/engine', '@longrun/worker', '@longrun/client'];

const root = resolve(import.meta.dirname, '..');
const out = resolve(process.argv[2] ?? resolve(root, '.packs'));
mkdirSync(out, { recursive: true });
const packed = JSON.parse(
  execFileSync(
    'npm',
    ['pack', '--json', '--pack-destination', out, ...PACKAGES.flatMap((w) => ['-w', w])],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  ),
);
for (const p of packed) console.log(resolve(out, p.filename));
