// Experiment, loaded with `node --import`: the API adds each task's job with BullMQ's public
// `Queue.add` after the create, as it does when the installed BullMQ's add scripts are not found
// (decision 59). The path the engine's adapter reads them from (`BULLMQ_SCRIPTS_MODULE`) is made
// not to resolve, as if a BullMQ release had moved it; BullMQ's own relative requires still
// resolve, so BullMQ itself is untouched and the adapter's own fallback is what runs:
//   node bench/ab.mjs --b-import=bench/experiments/bullmq-public-add.mjs
// tests/bullmq-adapter.test.ts starts an API with it to keep that fallback working end to end.
import Module from 'node:module';

const HIDDEN = 'bullmq/dist/cjs/scripts/index.js';
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === HIDDEN) {
    throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' });
  }
  return resolveFilename.call(this, request, ...rest);
};
