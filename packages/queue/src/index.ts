export * from './redis.js';
export * from './errors.js';
export * from './keys.js';
export * from './stable-json.js';
export * from './task-store.js';
export * from './task-queue.js';
export * from './task-worker.js';
