import type { Logger } from 'pino';

/** Keys per settle write. */
const SETTLE_BATCH = 1000;

/**
 * Keys written to the store in batches, in the background, retried until the write succeeds.
 * `write` answers the keys it changed (those still this owner's); `written` gets both.
 */
export class KeyWriter {
  private pending: string[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly write: (keys: string[]) => Promise<readonly string[]>,
    private readonly written: (keys: string[], changed: readonly string[]) => void,
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  get idle(): boolean {
    return !this.pending.length && !this.writing;
  }

  add(keys: readonly string[]): void {
    this.pending.push(...keys);
    void this.flush();
  }

  flush(): Promise<void> {
    if (this.writing) return this.writing;
    if (!this.pending.length) return Promise.resolve();
    const keys = this.pending.splice(0, SETTLE_BATCH);
    this.writing = this.write(keys).then(
      (changed) => {
        this.writing = undefined;
        this.written(keys, changed);
        if (this.pending.length) void this.flush();
      },
      (err: unknown) => {
        this.writing = undefined;
        this.pending.unshift(...keys);
        this.log.warn({ err, keys: keys.length }, `could not ${this.what} yet`);
      },
    );
    return this.writing;
  }

  /** Writes what is pending, until done or the store fails (then a sweep takes the rest later). */
  async drain(): Promise<void> {
    while (!this.idle) {
      await this.writing;
      const before = this.pending.length;
      await this.flush();
      if (this.pending.length >= before && !this.writing) break;
    }
  }
}
