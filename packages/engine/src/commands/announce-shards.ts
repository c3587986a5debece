import { defineScript } from '../lua/script.js';

/** `lua/announce-shards.lua`: the shard count now stored, after raising it to `count`. */
export const announceShards = defineScript({
  file: 'announce-shards',
  keys: ['count'],
  args: ['count'],
  decode: ([, count]) => Number(count),
});
