// Prices edited copies of a captured create-many call inside Redis (issue 28): after
// `node bench/experiments/lua-profile.mjs` wrote /tmp/lp/script.lua and /tmp/lp/args.lua, copy
// the script, edit the copy (leave a write out, return early), and run
//   node bench/experiments/create-variants.mjs /tmp/lp/script.lua /tmp/lp/edited.lua …
// Each file is run 3 rounds x 1 500 calls of the captured 8 tasks, every call with fresh task
// ids, on a private redis-server; printed: Redis CPU per task, per round.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, startPrivateRedis, redisCpuUs } from '../lib/redis.mjs';
import { cleanupAll } from '../lib/children.mjs';
const argsLua = readFileSync('/tmp/lp/args.lua', 'utf8');
const parse = (name) =>
  JSON.parse(
    '[' + new RegExp(`^${name} = \\{(.*)\\}$`, 'm').exec(argsLua)[1].replace(/\\\n/g, '\\n') + ']',
  );
const KEYS = parse('KEYS'),
  ARGV = parse('ARGV');
const ids = [
  ...new Set(KEYS.join(' ').match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g)),
];
const variants = process.argv.slice(2);
const calls = 1500;
const r = await startPrivateRedis();
const redis = connect(r.url);
const out = {};
try {
  for (let round = 0; round < 3; round++)
    for (const file of variants) {
      const sha = await redis.script('LOAD', readFileSync(file, 'utf8'));
      const prefix = `v${round}${randomUUID().slice(0, 6)}`;
      const fix = (s) => s.replaceAll('lp-', `${prefix}-`);
      const before = await redisCpuUs(redis);
      const pending = [];
      for (let c = 0; c < calls; c++) {
        const map = new Map(ids.map((id) => [id, randomUUID()]));
        const sub = (s) => {
          let t = s;
          for (const [a, b] of map) t = t.replaceAll(a, b);
          return t;
        };
        const k = KEYS.map((s) => fix(sub(s)));
        const a = ARGV.map(sub);
        pending.push(redis.evalsha(sha, k.length, ...k, ...a));
        if (pending.length >= 4) await Promise.all(pending.splice(0));
      }
      await Promise.all(pending);
      (out[file] ??= []).push(((await redisCpuUs(redis)) - before) / (calls * 8));
    }
} finally {
  redis.disconnect();
  await cleanupAll();
}
for (const [f, xs] of Object.entries(out))
  console.log(f.padEnd(30), xs.map((x) => x.toFixed(1)).join(' / '), 'us Redis CPU per task');
