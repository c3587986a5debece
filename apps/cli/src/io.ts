import { readFile } from 'node:fs/promises';
import { UsageError } from './args.js';
import type { Output } from './progress.js';

/** What a command line runs against: the process's streams and environment (tests pass their own). */
export interface Io {
  stdout: Output;
  stderr: Output;
  stdin: AsyncIterable<Buffer | string>;
  env: Record<string, string | undefined>;
  version: string;
  /** Aborted on Ctrl-C. */
  interrupt: AbortSignal;
}

/** `--input` as JSON: inline, `@file`, or `-` for stdin. */
export async function readJson(source: string, io: Io): Promise<unknown> {
  let text = source;
  if (source === '-') {
    text = '';
    for await (const chunk of io.stdin) text += chunk.toString();
  } else if (source.startsWith('@')) {
    text = await readFile(source.slice(1), 'utf8').catch((error: Error) => {
      throw new UsageError(`Cannot read ${source.slice(1)}: ${error.message}`);
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--input is not valid JSON: ${(error as Error).message}`);
  }
}
