/** The example job types (for tests and typed clients inside this repository). */
export * from './jobs/index.js';
