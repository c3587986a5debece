// Exact Redis commands per operation, from a MONITOR sample (untimed: MONITOR slows Redis down).
import { setTimeout as sleep } from 'node:timers/promises';
import { ctx, sum } from './context.mjs';
import { connect } from './redis.mjs';

/**
 * Counts the commands clients send while `fn` runs `operations` operations. Commands run inside
 * Lua scripts are counted apart (`lua`); the benchmark's own connection is left out.
 */
export async function monitorSample(operations, fn) {
  const own = ctx.redis.stream?.localPort;
  const client = connect(ctx.redisUrl);
  const monitor = await client.monitor();
  const top = {};
  const lua = {};
  monitor.on('monitor', (_time, argv, source) => {
    const cmd = String(argv[0]).toLowerCase();
    if (source === 'lua') lua[cmd] = (lua[cmd] ?? 0) + 1;
    else if (Number(String(source).split(':').pop()) !== own) top[cmd] = (top[cmd] ?? 0) + 1;
  });
  await sleep(100);
  try {
    await fn();
    await sleep(200);
  } finally {
    monitor.disconnect();
    client.disconnect();
  }
  return { requests: operations, top, lua, total: sum(Object.values(top)) };
}

/** "2.00 (evalsha 2.00)": commands sent per operation, then per command. */
export function tripsText(sample, which = 'top') {
  if (!sample) return 'n/a';
  const per = Object.entries(sample[which])
    .sort((a, b) => b[1] - a[1])
    .map(([cmd, n]) => `${cmd} ${(n / sample.requests).toFixed(2)}`);
  if (which !== 'top') return per.join(', ');
  return `${(sample.total / sample.requests).toFixed(2)} (${per.join(', ')})`;
}
