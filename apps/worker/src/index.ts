/** The job catalog, for the API to validate with the very definitions the worker runs. */
export * from './jobs/index.js';
