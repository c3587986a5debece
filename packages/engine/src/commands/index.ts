// Every script's typed wrapper (one per file of lua/). Internal to the engine: stores call these.
export { announceShards } from './announce-shards.js';
