/** A wake-up that may come before anyone waits for it (then the next wait returns at once). */
export class Wakeup {
  private pending = false;
  private release: (() => void) | undefined;

  fire(): void {
    if (this.release) this.release();
    else this.pending = true;
  }

  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (this.pending || signal.aborted) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.release = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.release = done;
    });
  }
}
