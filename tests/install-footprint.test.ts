import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// What `npm ci` installs for everyone is what the service needs (issue 41, item 14): the other
// runtimes the tests drive (Node 22, Bun, the MCP conformance suite, ~300 MB under tools/) are
// installed by the commands that use them, the first time.

const root = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

describe('npm ci installs only what the service needs', () => {
  it('runs no install hook of its own', () => {
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) {
      expect(pkg.scripts[hook], hook).toBeUndefined();
    }
  });

  it('the commands that need the other runtimes install them first', () => {
    expect(pkg.scripts.test).toMatch(/^node scripts\/install-runtimes\.mjs && /);
    for (const script of ['test:bun', 'start:api:bun', 'start:worker:bun', 'bench']) {
      expect(pkg.scripts[script], script).toMatch(/^node scripts\/install-runtimes\.mjs bun && /);
    }
  });

  it('install-runtimes refuses a runtime it does not know, naming the ones it does', () => {
    const run = spawnSync(process.execPath, ['scripts/install-runtimes.mjs', 'nope'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/node22, bun, mcp-conformance/);
  });

  it('installed, it installs nothing again', () => {
    const run = spawnSync(process.execPath, ['scripts/install-runtimes.mjs'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/installing/);
  });
});
