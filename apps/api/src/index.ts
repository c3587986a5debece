export { createApp, createListener, type AppDeps } from './app.js';
export { ApiKeys } from './http/auth.js';
export { loadConfig, type ApiConfig } from './config.js';
