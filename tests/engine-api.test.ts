// The engine's public face is named (decision 56): a door or the worker SDK gets the task API and
// the worker runtime, never the stores, batches or scripts, which only this repository's tests
// and benchmarks reach, through `@longrun/engine/internal`.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import * as publicFace from '@longrun/engine';
import * as internal from '@longrun/engine/internal';

const INSIDE = [
  'TaskStore',
  'TaskQueue',
  'TaskLog',
  'TaskIndex',
  'CreateBatch',
  'CompletionBatch',
  'Shard',
  'engineParts',
  'shardOfTaskId',
  'newTaskId',
];

it('keeps stores, batches and scripts out of @longrun/engine', () => {
  for (const name of INSIDE) expect(publicFace, name).not.toHaveProperty(name);
  // What the doors and the worker SDK use is there.
  for (const name of ['TaskEngine', 'TaskWorker', 'createRedis', 'crashingFaults']) {
    expect(publicFace, name).toHaveProperty(name);
  }
});

it('exports every internal module, and all of the public face, from @longrun/engine/internal', () => {
  for (const name of [...INSIDE, ...Object.keys(publicFace)]) {
    expect(internal, name).toHaveProperty(name);
  }
  const pkg = JSON.parse(
    readFileSync(resolve(import.meta.dirname, '../packages/engine/package.json'), 'utf8'),
  ) as { exports: Record<string, unknown> };
  expect(Object.keys(pkg.exports)).toEqual(['.', './internal']);
});

it('shows a door no part of a TaskEngine: its shards come from engineParts only', () => {
  const engineKeys = Object.getOwnPropertyNames(publicFace.TaskEngine.prototype);
  for (const part of ['jobs', 'store', 'log', 'shardOf', 'knownShards']) {
    expect(engineKeys, part).not.toContain(part);
  }
  expect(() => internal.engineParts({})).toThrow(/not a TaskEngine/);
});

it('keeps the apps and the worker SDK on the public face', () => {
  const root = resolve(import.meta.dirname, '..');
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? sources(join(dir, e.name))
        : e.name.endsWith('.ts')
          ? [join(dir, e.name)]
          : [],
    );
  const dirs = [
    ...readdirSync(join(root, 'apps')).map((app) => join(root, 'apps', app, 'src')),
    join(root, 'packages/worker/src'),
  ];
  const files = dirs.flatMap(sources);
  expect(files.length).toBeGreaterThan(20);
  for (const file of files) {
    expect(readFileSync(file, 'utf8'), file).not.toContain('@longrun/engine/internal');
  }
});
