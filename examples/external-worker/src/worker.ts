import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createWorker, defineJobType, stopOnSignals } from '@longrun/worker';

/**
 * A job type of this service: exports a customer's invoices month by month, reporting progress,
 * stopping at once when cancelled, and asking a person to approve before it publishes.
 */
export const invoiceExport = defineJobType({
  name: 'invoice-export',
  input: z.object({
    customer: z.string().min(1),
    months: z.number().int().min(1).max(24),
    /** Milliseconds of work per month (a stand-in for the real export). */
    stepMs: z.number().int().min(0).max(10_000).default(100),
    approval: z.boolean().default(true),
  }),
  attempts: 3,
  queue: 'exports',
  async handler({ customer, months, stepMs, approval }, ctx) {
    for (let month = 1; month <= months; month++) {
      ctx.signal.throwIfAborted(); // cancelled: stop now, nothing is published
      await sleep(stepMs, undefined, { signal: ctx.signal });
      await ctx.progress(Math.round((month / months) * 100), `month ${month} of ${months}`);
    }
    let approvedBy: string | null = null;
    if (approval) {
      // The task becomes input_required and the job waits without holding a worker slot; once
      // answered, the handler runs again from the start and this call returns the answer.
      const answer = await ctx.requestInput({
        message: `Publish ${months} months of invoices for ${customer}?`,
        schema: z.object({ approve: z.boolean(), by: z.string().min(1) }),
      });
      if (!answer.approve) throw new Error(`${answer.by} did not approve the export`);
      approvedBy = answer.by;
    }
    return { customer, months, rows: months * 100, approvedBy };
  },
});

const worker = createWorker({
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  prefix: process.env.LONGRUN_PREFIX ?? 'longrun',
  jobs: [invoiceExport],
  concurrency: 4,
  metrics: { port: Number(process.env.METRICS_PORT ?? 0), host: '127.0.0.1' },
});
stopOnSignals(worker);
await worker.start();
