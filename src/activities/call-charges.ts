import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Charge } from '../scheduler/types';
import type { CallIntentStore } from '../stores/call-intents/call-intents';
import type { SchedulerMailbox } from './mailbox';

/** How long owners live unseen, how often dead ones are swept, how long settled rows are kept. */
export interface CallChargeTiming {
  /** An owner not seen for this long is dead: its unsettled calls are charged by a sweep. */
  ownerDeadMs: number;
  sweepMs: number;
  keepSettledMs: number;
}

/** Rows taken per claim: a sweep takes batches until fewer come back. */
const SWEEP_BATCH = 500;
/** Keys per settle write. */
const SETTLE_BATCH = 1000;

/**
 * Every model call's charge, made durable: a row per call is written before the call goes, the
 * call's charge travels in the mailbox with the row's key, and the row is settled once the report
 * carrying it reached the scheduler. A worker that dies leaves its unsettled rows behind; another
 * worker's sweep takes them (once: the claim is exclusive) and charges each the bill it recorded,
 * or its reservation when it died before the bill was known. So `spent ≥ bill`, and a SIGKILL
 * overcharges at most the reservations of the calls it cut before the provider billed them.
 *
 * One residue: a worker that dies between a report's delivery and its settle write leaves settled
 * charges unsettled, and they are charged once more (over, never under). So does a worker stalled
 * longer than `ownerDeadMs` (its rows are swept while its own mailbox still holds their charges).
 */
export class CallCharges {
  /** This process: a new one (a restart) is a new owner, so the dead one's rows are swept. */
  readonly owner = `${hostname()}/${process.pid}/${randomUUID()}`;
  private timers: NodeJS.Timeout[] = [];
  private toSettle: string[] = [];
  private settling: Promise<void> | undefined;
  private sweeping: Promise<number> | undefined;

  constructor(
    private readonly store: CallIntentStore,
    private readonly mailbox: Pick<SchedulerMailbox, 'charge'>,
    private readonly timing: CallChargeTiming,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Says this owner is alive, sweeps once, and keeps both going on timers. */
  async start(): Promise<void> {
    await this.store.beat(this.owner, this.now());
    await this.sweep().catch((err: unknown) => this.log.warn({ err }, 'call charge sweep failed'));
    const beat = setInterval(() => void this.beat(), Math.max(200, this.timing.ownerDeadMs / 6));
    const sweep = setInterval(
      () => void this.sweep().catch((err: unknown) => this.log.warn({ err }, 'call charge sweep failed')),
      this.timing.sweepMs,
    );
    for (const t of [beat, sweep]) t.unref();
    this.timers.push(beat, sweep);
  }

  /** Records a call before it goes; answers its key. The call must not go when this throws. */
  async begin(call: { tenant: string; runId: string; attempt: number; step: number; reserved: number }) {
    const key = `${call.runId}/${call.attempt}/${call.step}/${randomUUID()}`;
    const { tenant, runId, attempt, reserved } = call;
    await this.store.begin({ key, tenant, runId, attempt, reserved, owner: this.owner }, this.now());
    return key;
  }

  /** The provider billed the call: its bill is recorded, and charged through the mailbox. */
  async billed(key: string, charge: Charge): Promise<void> {
    // Unrecorded, the bill is still charged from here; only a sweep would charge the reservation.
    await this.store
      .billed(key, charge.tokens)
      .catch((err: unknown) => this.log.warn({ err, key }, 'could not record a call bill'));
    this.mailbox.charge(charge, [key]);
  }

  /** The provider refused the call (it billed nothing): there is nothing to charge. */
  async unbilled(key: string): Promise<void> {
    // Left behind, the row would be charged its reservation by a sweep once this worker is gone.
    await this.store
      .drop(key)
      .catch((err: unknown) => this.log.warn({ err, key }, 'could not drop an unbilled call'));
  }

  /** The call's outcome is unknown (cut mid-flight, aborted): its worst case is charged. */
  uncertain(key: string, charge: Charge): void {
    this.mailbox.charge(charge, [key]);
  }

  /** The mailbox delivered the charges of `keys`: settled in batches, in the background. */
  settled(keys: readonly string[]): void {
    this.toSettle.push(...keys);
    void this.writeSettled();
  }

  /** Takes the unsettled calls of dead owners and charges them; answers how many it took. */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Stops the timers and writes what is settled (the mailbox was flushed first). */
  async close(): Promise<void> {
    for (const t of this.timers.splice(0)) clearInterval(t);
    await this.sweeping?.catch(() => undefined);
    while (this.toSettle.length || this.settling) {
      await this.settling;
      const before = this.toSettle.length;
      await this.writeSettled();
      if (this.toSettle.length >= before) break; // the store fails: a sweep settles them later, over
    }
  }

  private async beat(): Promise<void> {
    await this.store
      .beat(this.owner, this.now())
      .catch((err: unknown) => this.log.warn({ err }, 'call charge owner beat failed'));
    void this.writeSettled(); // retries a settle write that failed
  }

  private writeSettled(): Promise<void> {
    if (this.settling) return this.settling;
    if (!this.toSettle.length) return Promise.resolve();
    const keys = this.toSettle.splice(0, SETTLE_BATCH);
    this.settling = this.store.settle(keys, this.now()).then(
      () => {
        this.settling = undefined;
        if (this.toSettle.length) void this.writeSettled();
      },
      (err: unknown) => {
        this.settling = undefined;
        this.toSettle.unshift(...keys);
        this.log.warn({ err, keys: keys.length }, 'could not settle delivered call charges yet');
      },
    );
    return this.settling;
  }

  private async sweepOnce(): Promise<number> {
    const now = this.now();
    const deadBefore = now - this.timing.ownerDeadMs;
    await this.store.beat(this.owner, now);
    let taken = 0;
    for (;;) {
      const rows = await this.store.claimOrphans(this.owner, deadBefore, SWEEP_BATCH);
      for (const r of rows) {
        const tokens = r.tokens ?? r.reserved;
        this.mailbox.charge({ tenant: r.tenant, runId: r.runId, attempt: r.attempt, tokens }, [r.key]);
      }
      taken += rows.length;
      if (rows.length < SWEEP_BATCH) break;
    }
    if (taken) this.log.warn({ calls: taken }, 'charged the calls of dead workers');
    await this.store.prune(now - this.timing.keepSettledMs, deadBefore);
    return taken;
  }
}
