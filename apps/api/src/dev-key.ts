import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The two development keys: a tenant's (`dev-…`) and an HTTP worker's (`devworker-…`). */
export type DevKeyKind = 'api' | 'worker';

const PREFIX: Record<DevKeyKind, string> = { api: 'dev-', worker: 'devworker-' };

export interface DevKey {
  key: string;
  /** Where it is kept: `<dataDir>/dev-api-key` or `<dataDir>/dev-worker-key`. */
  file: string;
  /** Made now (no usable key was kept). */
  made: boolean;
}

/**
 * A development key for a service started without `LONGRUN_API_KEYS` (`kind` `api`, tenant
 * `dev`) or without `LONGRUN_WORKER_KEYS` (`worker`, issue 41: an HTTP worker such as
 * examples/python-worker runs beside `npm start`) outside production: the one kept in
 * `<dataDir>/dev-<kind>-key`, or a new one written there (mode 0600). `npm start`
 * (scripts/start.mjs) and the API alone (`npm run start:api`) both call this, so the key one
 * prints is the key the other serves, and an exported key survives a restart.
 * Throws when the directory cannot be written (the caller falls back to a key for this run).
 * @example const { key, file } = devKey(resolve('.data')) // "dev-7mX…", ".data/dev-api-key"
 */
export function devKey(dataDir: string, kind: DevKeyKind = 'api'): DevKey {
  const file = join(dataDir, `dev-${kind}-key`);
  const pattern = new RegExp(`^${PREFIX[kind]}[A-Za-z0-9_-]{16,}$`);
  const kept = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (pattern.test(kept)) {
    chmodSync(file, 0o600); // a copied or older file too
    return { key: kept, file, made: false };
  }
  const key = newDevKey(kind);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // `mode` applies only to a new file
  return { key, file, made: true };
}

/** A key for this run only (the data dir could not be written). */
export function newDevKey(kind: DevKeyKind): string {
  return `${PREFIX[kind]}${randomBytes(18).toString('base64url')}`;
}
