// The api service's command in docker-compose.yml: the API, with a key of its own when
// LONGRUN_API_KEYS is empty (docs/decisions.md, decision 29). The image runs with
// NODE_ENV=production, where the API refuses to start without keys; so that `docker compose up`
// works on a fresh clone without editing a file, the first start makes a random key for tenant
// "local" and keeps it in the file named by the first argument (a volume, so restarts and
// rebuilds keep it). The key is never printed: logs may be collected; the file is readable with
//   docker compose exec -T api cat /var/lib/longrun/api-key
// Set LONGRUN_API_KEYS (e.g. in .env) and the file is neither read nor written.
//
//   node scripts/compose-api.mjs /var/lib/longrun/api-key
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!process.env.LONGRUN_API_KEYS) {
  if (!file) {
    console.error('usage: node scripts/compose-api.mjs <key file> (or set LONGRUN_API_KEYS)');
    process.exit(1);
  }
  const read = () => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch (error) {
      if (error.code === 'ENOENT') return '';
      throw error;
    }
  };
  let key = read();
  if (!key) {
    key = `local-${randomBytes(24).toString('base64url')}`;
    try {
      // No newline, so `$(… cat …)` gives the bare key even through a TTY; `wx`: if another
      // start wrote it first, theirs stands.
      writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      key = read();
    }
  }
  process.env.LONGRUN_API_KEYS = `local:${key}`;
  console.error(
    `[longrun] LONGRUN_API_KEYS is not set: tenant "local" uses the key in ${file} ` +
      `(docker compose exec -T api cat ${file})`,
  );
}
await import('../apps/api/dist/main.js');
