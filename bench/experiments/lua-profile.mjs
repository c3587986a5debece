// Where a create's Lua time goes, away from Redis (issue 28): captures one create-many call as
// the API sends it (8 tasks: cap, budget, fair share, the job), then runs the script's source
// under a standalone Lua 5.1 (Debian's lua5.1 and lua-cjson) with `redis.call` answered by a
// stub, many times, and prints µs per task: the whole script, and the stub's own share.
//   node bench/experiments/lua-profile.mjs [--out=/tmp/lp] [--iterations=20000]
// Then edit <out>/script.lua and run `lua5.1 <out>/harness.lua` again to price a change.
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TaskQueue, TaskStore } from '@longrun/engine/internal';
import { createMany } from '../../packages/engine/dist/commands/create-many.js';
import { cleanupAll } from '../lib/children.mjs';
import { apiItem, newRecord } from '../lib/create-items.mjs';
import { connect, startPrivateRedis } from '../lib/redis.mjs';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: '/tmp/lp' },
    iterations: { type: 'string', default: '20000' },
  },
});
const BATCH = 8;
const input = { message: 'hello from the benchmark', n: 42, tags: ['a', 'b'] };
const redisInfo = await startPrivateRedis();
const redis = connect(redisInfo.url);
let captured;
try {
  const prefix = `lp-${randomUUID().slice(0, 8)}`;
  const store = new TaskStore(redis, prefix, 86_400_000);
  const jobs = new TaskQueue({ connection: redis, prefix, types: new Map() });
  const queue = jobs.queueFor('echo');
  await queue.waitUntilReady();
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (cmd) => {
    if (!captured && /^evalsha$/i.test(cmd.name)) captured = cmd.args.map(String);
    return send(cmd);
  };
  const items = [];
  for (let i = 0; i < BATCH; i++) {
    items.push(apiItem(store, jobs, queue, newRecord(`t${i % 3}`, input)));
  }
  await store.createMany(items);
} finally {
  redis.disconnect();
  await cleanupAll();
}
const [, numkeys, ...rest] = captured;
const keys = rest.slice(0, Number(numkeys));
const argv = rest.slice(Number(numkeys));
const lua = (s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
mkdirSync(values.out, { recursive: true });
writeFileSync(join(values.out, 'script.lua'), createMany.source);
writeFileSync(
  join(values.out, 'args.lua'),
  `KEYS = {${keys.map(lua).join(', ')}}\nARGV = {${argv.map(lua).join(', ')}}\nTASKS = ${BATCH}\n`,
);
writeFileSync(
  join(values.out, 'harness.lua'),
  `local dir = arg[1] or ${lua(values.out)}
dofile(dir .. '/args.lua')
cjson = require('cjson')
local counts, counter = {}, 0
local answers = {
  EXISTS = 0, HGET = false, GET = false, ZCOUNT = 0, PTTL = -2, XADD = '1-1', HSET = 1, HMSET = 'OK',
  PEXPIREAT = 1, PEXPIRE = 1, ZADD = 1, SET = 'OK', HINCRBY = 1, ZREMRANGEBYLEX = 0,
  ZREMRANGEBYSCORE = 0, LLEN = 0, DEL = 1,
}
local empty = {}
redis = {call = function(cmd, ...)
  if COUNT then counts[cmd] = (counts[cmd] or 0) + 1 end
  if cmd == 'INCR' or cmd == 'INCRBY' then counter = counter + 1 return counter end
  if cmd == 'HMGET' then return {false, false, false} end
  local a = answers[cmd]
  if a == nil then return empty end
  return a
end}
local f = assert(loadstring(io.open(dir .. '/script.lua'):read('*a')))
local N = tonumber(arg[2] or ${Number(values.iterations)})
COUNT = true f() COUNT = false
local calls = 0
for _, n in pairs(counts) do calls = calls + n end
local t = os.clock()
for i = 1, N do f() end
local whole = (os.clock() - t) / N / TASKS * 1e6
local t2 = os.clock()
for i = 1, N * calls do redis.call('ZADD', 'k', 0, 'm') end
local stub = (os.clock() - t2) / N / TASKS * 1e6
print(string.format('script %.2f us per task (stub share %.2f, %d calls a run); Lua work %.2f us per task', whole, stub, calls, whole - stub))
`,
);
console.log(
  execFileSync('lua5.1', [join(values.out, 'harness.lua'), values.out], { encoding: 'utf8' }),
);
