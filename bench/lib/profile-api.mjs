// CPU profiles of the API under load (node --cpu-prof), submit and poll separately.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarise } from '../profile-summary.mjs';
import { C } from './config.mjs';
import { ctx, indexKey, poll, post, say } from './context.mjs';
import { num } from './report.mjs';
import { load, startApi } from './services.mjs';

/** Microseconds on CLOCK_MONOTONIC: the clock V8 stamps profile samples with (Linux). */
const hrUs = () => Number(process.hrtime.bigint() / 1000n);

export async function profileApi({ prefix, apiKeys, keep }) {
  const dir = keep ? mkdtempSync(join(tmpdir(), 'longrun-bench-profiles-')) : join(ctx.tmp, 'prof');
  const one = async (name, makeLoad) => {
    const out = join(dir, name);
    const api = await startApi(`api-profile-${name}`, {
      redisUrl: ctx.redisUrl,
      prefix,
      apiKeys,
      nodeArgs: ['--cpu-prof', '--cpu-prof-dir', out],
    });
    await load({ ...(await makeLoad(api)), duration: 1 }); // warm-up, left out of the summary
    const fromUs = hrUs();
    const r = await load({ ...(await makeLoad(api)), duration: C.profileS });
    const toUs = hrUs();
    await api.child.stop('SIGTERM', 20_000);
    const file = readdirSync(out).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile in ${out}`);
    const profile = JSON.parse(readFileSync(join(out, file), 'utf8'));
    let summary = summarise(profile, { window: { fromUs, toUs } });
    if (summary.totalMs < 100) summary = summarise(profile); // another clock: keep every sample
    const where = keep ? ` (${join(out, file)})` : '';
    say(
      `profile ${name}: ${num(r.rps)} req/s under --cpu-prof, ${num(summary.busyMs)} ms busy${where}`,
    );
    return { summary, rps: r.rps };
  };
  const submit = await one('submit', async (api) => post(api, {}));
  const polls = await one('poll', async (api) => {
    const members = await ctx.redis.zrandmember(indexKey(prefix), 2000);
    const file = join(ctx.tmp, 'profile.ids');
    writeFileSync(file, members.map((m) => m.slice(14)).join('\n'));
    return poll(api, file, {});
  });
  return { submit, poll: polls };
}
