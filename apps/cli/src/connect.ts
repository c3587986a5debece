import { createClient, type LongrunClient } from '@longrun/client';
import { UsageError, type Values } from './args.js';
import type { Io } from './io.js';

const DEFAULT_URL = 'http://localhost:3000';

/** The API's URL: `--url`, else `LONGRUN_URL`, else a local API. */
export function baseUrlFrom(values: Values, env: Io['env']): string {
  return values.url ?? (env.LONGRUN_URL || DEFAULT_URL);
}

/** A client for the API, from the options and environment; no key or a bad URL is a usage error. */
export function clientFrom(values: Values, env: Io['env']): LongrunClient {
  const baseUrl = baseUrlFrom(values, env);
  const apiKey = values['api-key'] ?? env.LONGRUN_API_KEY;
  if (!apiKey) {
    throw new UsageError(
      'No API key: set LONGRUN_API_KEY (or pass --api-key); `npm start` prints a development key',
    );
  }
  try {
    new URL(baseUrl);
  } catch {
    throw new UsageError(`Not a URL: ${baseUrl}`);
  }
  return createClient({ baseUrl, apiKey });
}
