// Experiment, loaded with `node --import`: coalesces the producer connection's writes. The first
// command written in an event-loop turn corks the socket and a setImmediate uncorks it, so every
// command issued by the requests handled in that turn leaves in one writev. Unlike ioredis
// auto-pipelining it builds no Pipeline object (which copies every defined script).
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../package.json', import.meta.url));
const { Redis } = require('ioredis');
const send = Redis.prototype.sendCommand;
const names = new Set((process.env.CORK_CONNECTIONS ?? 'longrun-producer').split(','));
Redis.prototype.sendCommand = function (command, stream) {
  const socket = this.stream;
  if (!stream && socket && this.status === 'ready' && names.has(this.options.connectionName) && !socket.__corked) {
    socket.__corked = true;
    socket.cork();
    setImmediate(() => {
      socket.__corked = false;
      socket.uncork();
    });
  }
  return send.call(this, command, stream);
};
