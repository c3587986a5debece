// Experiment, loaded with `node --import` into a worker: ioredis auto-pipelining on the worker's
// connections (commands issued in the same event-loop turn by concurrent jobs go out in one
// write). Compare with `node bench/profile-worker.mjs --no-profile [--import=this file]`.
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../package.json', import.meta.url));
const { Redis } = require('ioredis');
const connect = Redis.prototype.connect;
Redis.prototype.connect = function (...args) {
  if (String(this.options.connectionName ?? '').startsWith('longrun-worker')) {
    this.options.enableAutoPipelining = true;
  }
  return connect.apply(this, args);
};
