import type { RegisteredJobType } from '@longrun/engine';
import { toolsFrom } from './tools.js';

/**
 * Tells this process's open MCP streams when the tool list changes: a worker registered a new
 * type, or a version whose schema, description or timeout differs. It compares the list made
 * from the API's job-type directory, which follows the registry in Redis (re-read on each
 * worker's announcement), so every replica notices the same changes and no replica needs to hear
 * of a stream held by another. It looks (in memory, once a second) only while a stream is open.
 */
export class ToolListChanges {
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private last = '';

  constructor(
    private readonly types: () => Iterable<RegisteredJobType>,
    private readonly everyMs = 1000,
  ) {}

  /** Calls `listener` after each change until the returned function is called. */
  add(listener: () => void): () => void {
    if (this.listeners.size === 0) {
      this.last = this.fingerprint();
      this.timer = setInterval(() => this.check(), this.everyMs);
      this.timer.unref();
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) clearInterval(this.timer);
    };
  }

  private check(): void {
    const now = this.fingerprint();
    if (now === this.last) return;
    this.last = now;
    for (const listener of [...this.listeners]) listener();
  }

  private fingerprint(): string {
    return JSON.stringify(toolsFrom(this.types()));
  }
}
