/**
 * The runs one worker process may have at once, over every queue and shard it consumes.
 *
 * BullMQ's `concurrency` is per `Worker`, and a process has one BullMQ worker per queue it
 * consumes (a queue per job type, decision 46) and per shard, so without this a process serving
 * six types would run six times its `concurrency`. A job a BullMQ worker took while every slot is
 * busy waits here (its lock renewed as any active job's, its task untouched) until one is free.
 *
 * @example
 * const slots = new RunSlots(8);
 * const release = await slots.acquire();
 * try { await run(); } finally { release(); }
 */
export class RunSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`RunSlots needs a limit >= 1: ${max}`);
  }

  /** Runs under way (the waiting ones not counted). */
  get active(): number {
    return this.running;
  }

  /** Jobs taken from a queue that wait for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  get limit(): number {
    return this.max;
  }

  /** A new limit (the shards served changed): waiting runs start if it grew. */
  setLimit(max: number): void {
    if (!Number.isInteger(max) || max < 1) throw new Error(`RunSlots needs a limit >= 1: ${max}`);
    this.max = max;
    this.drain();
  }

  /**
   * A slot's release at once if one is free and nobody waits (no promise made), else `undefined`
   * (then `acquire`); call the release exactly once.
   */
  tryAcquire(): (() => void) | undefined {
    if (this.running >= this.max || this.waiting.length > 0) return undefined;
    this.running += 1;
    return this.releaser();
  }

  /** Resolves with the slot's release once a slot is free; call the release exactly once. */
  acquire(): Promise<() => void> {
    return new Promise((resolve) => {
      this.waiting.push(() => resolve(this.releaser()));
      this.drain();
    });
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.running -= 1;
      this.drain();
    };
  }

  private drain(): void {
    while (this.running < this.max && this.waiting.length > 0) {
      this.running += 1;
      this.waiting.shift()!();
    }
  }
}
