#!/usr/bin/env node
// The `longrun` command. A committed file rather than dist/main.js itself, so that `npm ci` can
// link node_modules/.bin/longrun on a fresh clone, before anything is built.
try {
  await import('../dist/main.js');
} catch (error) {
  const missing =
    error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/main.js');
  if (!missing) throw error;
  console.error('longrun: the CLI is not built yet: run `npm run build` (or `npm start`) first');
  process.exit(4);
}
