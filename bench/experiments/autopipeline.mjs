// Experiment, loaded with `node --import`: turns on ioredis auto-pipelining for the API's producer
// connection (commands issued in the same tick by concurrent requests go out in one write).
// It changes nothing in the repository; bench/ab.mjs compares an API with and without it.
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../package.json', import.meta.url));
const { Redis } = require('ioredis');
const connect = Redis.prototype.connect;
Redis.prototype.connect = function (...args) {
  if (this.options.connectionName === 'longrun-producer') this.options.enableAutoPipelining = true;
  return connect.apply(this, args);
};
