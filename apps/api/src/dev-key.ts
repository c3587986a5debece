import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A development key as `npm start` and the API make it. */
const DEV_KEY = /^dev-[A-Za-z0-9_-]{16,}$/;

export interface DevKey {
  key: string;
  /** Where it is kept: `<dataDir>/dev-api-key`. */
  file: string;
  /** Made now (no usable key was kept). */
  made: boolean;
}

/**
 * The development key (tenant `dev`) for a service started without `LONGRUN_API_KEYS` outside
 * production: the one kept in `<dataDir>/dev-api-key`, or a new one written there (mode 0600).
 * `npm start` (scripts/start.mjs) and the API alone (`npm run start:api`) both call this, so the
 * key one prints is the key the other serves, and an exported key survives a restart.
 * Throws when the directory cannot be written (the caller falls back to a key for this run).
 * @example const { key, file } = devApiKey(resolve('.data')) // "dev-7mX…", ".data/dev-api-key"
 */
export function devApiKey(dataDir: string): DevKey {
  const file = join(dataDir, 'dev-api-key');
  const kept = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (DEV_KEY.test(kept)) {
    chmodSync(file, 0o600); // a copied or older file too
    return { key: kept, file, made: false };
  }
  const key = `dev-${randomBytes(18).toString('base64url')}`;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // `mode` applies only to a new file
  return { key, file, made: true };
}
