import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Apps are deployables; only packages are shared. An app that imports another (the API once
// imported the worker's job catalog) ties their builds and deploys together.

const root = resolve(import.meta.dirname, '..');
const apps = readdirSync(join(root, 'apps')).map((dir) => {
  const pkg = JSON.parse(readFileSync(join(root, 'apps', dir, 'package.json'), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
  };
  return { dir, name: pkg.name, deps: Object.keys(pkg.dependencies ?? {}) };
});

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

describe('no app imports another', () => {
  it.each(apps)('$dir depends on no app and imports none', ({ dir, deps }) => {
    const others = apps.filter((a) => a.dir !== dir).map((a) => a.name);
    expect(deps.filter((d) => others.includes(d))).toEqual([]);
    for (const file of sources(join(root, 'apps', dir, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const other of others) expect(text, file).not.toContain(`'${other}'`);
    }
  });
});
