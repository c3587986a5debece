import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// `npx longrun` on a fresh clone: `npm ci` links a package's bin only if its target exists when
// it runs, before any build. A bin pointing at build output (dist/) gave no `longrun` command.

const root = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(resolve(root, 'apps/cli/package.json'), 'utf8')) as {
  bin: Record<string, string>;
  files: string[];
};

describe('the longrun command', () => {
  it('points at a committed file, shipped in the package, not at build output', () => {
    const target = pkg.bin.longrun!;
    expect(target).not.toMatch(/dist\//);
    // Throws if git does not track it (a fresh clone would not have it).
    execFileSync('git', ['ls-files', '--error-unmatch', `apps/cli/${target}`], { cwd: root });
    expect(pkg.files).toContain(target.replace(/^\.\//, '').split('/')[0]);
  });

  it('runs as `npx longrun` from the repository root', () => {
    const out = execFileSync('npx', ['--no-install', 'longrun', '--version'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
