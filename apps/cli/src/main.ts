#!/usr/bin/env node
// `longrun`: reads the process's arguments, environment and streams, runs one command, exits.
import { readFileSync } from 'node:fs';
import { run } from './cli.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const interrupt = new AbortController();
process.once('SIGINT', () => interrupt.abort(new Error('interrupted')));

const code = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  version: pkg.version,
  interrupt: interrupt.signal,
});
// Let stdout drain (a pipe may be slow), then exit even if a keep-alive socket lingers.
process.exitCode = code;
process.stdout.write('', () => process.exit(code));
