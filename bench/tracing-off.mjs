// What tracing adds to the submit and run paths while it is off (issue 30): the one check each
// makes, `activeTracer()` (no OpenTelemetry SDK registered: no span object is made), timed in a
// tight loop, next to an empty call for scale. In-process, no I/O.
//
//   npm run build && node bench/tracing-off.mjs [--calls=20000000]
import { parseArgs } from 'node:util';
import { activeTracer } from '@longrun/engine/internal';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '20000000' } } });
const calls = Number(values.calls);
const empty = () => undefined;

function time(fn) {
  let found = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) if (fn() !== undefined) found += 1;
  const ns = Number(process.hrtime.bigint() - t0) / calls;
  if (found) throw new Error('a tracer was found: an SDK is registered');
  return ns;
}

for (let round = 1; round <= 3; round++) {
  const check = time(activeTracer);
  const base = time(empty);
  console.log(
    `round ${round}: activeTracer() ${check.toFixed(1)} ns per call, an empty call ${base.toFixed(1)} ns`,
  );
}
