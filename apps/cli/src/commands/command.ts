import type { LongrunClient } from '@longrun/client';
import type { Values } from '../args.js';
import type { Io } from '../io.js';

/** One `longrun` command: its client, its positional argument, its options; resolves to the exit code. */
export type Command = (
  client: LongrunClient,
  arg: string,
  values: Values,
  io: Io,
) => Promise<number>;
