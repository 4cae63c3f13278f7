import type { SubmitResult, UnitSubmission } from '../scheduler/types';

interface Pending<T, R> {
  units: T[];
  resolve(r: R[]): void;
  reject(err: unknown): void;
}

/**
 * Coalesces concurrent requests into one scheduler message, answered item by item in order. While one message is in flight,
 * new submissions accumulate and leave together when it returns, so a burst of 10,000 requests
 * costs the scheduler a few dozen updates (a workflow takes at most 10 updates in flight).
 */
export class Coalescer<T, R> {
  private queue: Pending<T, R>[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly send: (units: T[]) => Promise<R[]>,
    private readonly opts: { lingerMs: number; maxUnits: number; maxInFlight: number },
  ) {}

  submit(units: T[]): Promise<R[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ units, resolve, reject });
      this.timer ??= setTimeout(() => this.pump(), this.opts.lingerMs);
    });
  }

  private pump(): void {
    this.timer = undefined;
    while (this.queue.length > 0 && this.inFlight < this.opts.maxInFlight) {
      const batch: Pending<T, R>[] = [];
      let size = 0;
      while (
        this.queue.length > 0 &&
        (batch.length === 0 || size + this.queue[0]!.units.length <= this.opts.maxUnits)
      ) {
        const p = this.queue.shift()!;
        batch.push(p);
        size += p.units.length;
      }
      this.inFlight++;
      void this.deliver(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.timer ??= setTimeout(() => this.pump(), 0);
      });
    }
  }

  private async deliver(batch: Pending<T, R>[]): Promise<void> {
    try {
      const results = await this.send(batch.flatMap((p) => p.units));
      let at = 0;
      for (const p of batch) {
        p.resolve(results.slice(at, at + p.units.length));
        at += p.units.length;
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}

/** Units offered to the scheduler, coalesced into `submit` updates. */
export class SubmitCoalescer extends Coalescer<UnitSubmission, SubmitResult> {}
