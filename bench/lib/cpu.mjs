// CPU time used by a process (user + system), from /proc on Linux: the cost per request of a
// process does not depend on how much of the machine other agents take, its throughput does.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond;

/** Seconds of CPU a process has used so far, or NaN where /proc is not there. */
export function cpuSeconds(pid) {
  try {
    ticksPerSecond ??=
      Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond; // utime, stime
  } catch {
    return NaN;
  }
}

/** Runs `fn` and returns its result with `cpu`: CPU seconds each pid used meanwhile. */
export async function withCpu(pids, fn) {
  const before = pids.map(cpuSeconds);
  const result = await fn();
  return { result, cpu: pids.map((pid, i) => cpuSeconds(pid) - before[i]) };
}
