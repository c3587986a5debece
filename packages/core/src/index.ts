export * from './status.js';
export * from './problem.js';
export * from './retry-after.js';
export * from './schemas.js';
export * from './task-record.js';
export * from './job-type.js';
export * from './env.js';
export * from './webhook-signature.js';
