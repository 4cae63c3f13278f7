import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { chargeId } from '../scheduler';
import type { Charge } from '../scheduler/types';
import type { CallIntentStore, ProvisionalCall, RecordedCall } from '../stores/call-intents/call-intents';
import { mapLimit } from '../util/map-limit';
import type { SchedulerMailbox } from './mailbox';
import type { UsageSource } from './usage-source';

/** How long owners live unseen, how often dead ones are swept, how long settled rows are kept. */
export interface CallChargeTiming {
  /** An owner not seen for this long is dead: its unsettled calls are charged by a sweep. */
  ownerDeadMs: number;
  sweepMs: number;
  keepSettledMs: number;
  /** How often provisional charges are looked up at the provider (with a usage source). */
  reconcileMs?: number;
  /** How long after its call a provisional charge waits before its lookup (the provider may still serve it). */
  reconcileAfterMs?: number;
}

/** One call key: a run's attempt's step. Every call made under it has a key beginning so. */
export interface CallKey {
  runId: string;
  attempt: number;
  step: number;
}

const keyPrefix = (c: CallKey) => `${c.runId}/${c.attempt}/${c.step}/`;

/** What an earlier call of a call key cost: its bill when `known`, else what it is charged (its reservation). */
export interface EarlierCall {
  key: string;
  tokens: number;
  known: boolean;
}

/** Rows taken per claim: a sweep takes batches until fewer come back. */
const SWEEP_BATCH = 500;
/** Keys per settle write. */
const SETTLE_BATCH = 1000;
/** Provisional charges looked up per reconcile pass, and at once. */
const RECONCILE_BATCH = 200;
const LOOKUPS_AT_ONCE = 8;

/** Keys written to the store in batches, in the background, retried until the write succeeds. */
class KeyWriter {
  private pending: string[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly write: (keys: string[]) => Promise<void>,
    private readonly written: (keys: string[]) => void,
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
      () => {
        this.writing = undefined;
        this.written(keys);
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

/**
 * Every model call's charge, made durable and exact. A row per call is written before the call
 * goes; the call's charge travels in the mailbox under the row's key; once the report carrying it
 * reached the scheduler the row is settled, and then the scheduler is told it may forget the key.
 * A worker that dies leaves its unsettled rows behind; another worker's sweep takes them (once: the
 * claim is exclusive) and charges each the bill it recorded, or its reservation when it died before
 * the bill was known. The scheduler books one charge per key while it holds the key, so a charge
 * delivered and not yet settled when its worker died is not booked twice.
 *
 * A charge at the reservation (a call cut mid-flight, of unknown outcome) is provisional: with a
 * {@link UsageSource}, the reconciler (its owner's, or a sweeper's once the owner is dead) looks the
 * call up at the provider once `reconcileAfterMs` passed, and sends the correction (billed −
 * reserved; a call never served is refunded in full), booked once per key in the same way. Without
 * one, the reservation stands (over, never under).
 *
 * Between any two steps a death is covered: before the charge was sent, the sweep sends it; after it
 * was delivered and before the settle write (or the confirmation), the scheduler still holds its key
 * and drops the sweep's repeat; after the settle write, nothing sends it again. Corrections likewise.
 * The residue: a worker stalled longer than `ownerDeadMs` whose rows were swept while it still
 * delivered and confirmed them, and a key pushed out of the scheduler's bounded memory (`charge-keys.ts`)
 * before a sweep came.
 */
export class CallCharges {
  /** This process: a new one (a restart) is a new owner, so the dead one's rows are swept. */
  readonly owner = `${hostname()}/${process.pid}/${randomUUID()}`;
  private timers: NodeJS.Timeout[] = [];
  private readonly settles: KeyWriter;
  private readonly reconciles: KeyWriter;
  /** Keys whose correction is on its way (not looked up again meanwhile). */
  private readonly correcting = new Set<string>();
  private sweeping: Promise<number> | undefined;
  private reconciling: Promise<number> | undefined;

  constructor(
    private readonly store: CallIntentStore,
    private readonly mailbox: Pick<SchedulerMailbox, 'charge' | 'confirm'>,
    private readonly timing: CallChargeTiming,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly usage: UsageSource | undefined = undefined,
  ) {
    const confirm = (correction: boolean) => (keys: string[]) =>
      this.mailbox.confirm(keys.map((k) => chargeId(k, correction)));
    this.settles = new KeyWriter(
      (keys) => this.store.settle(keys, this.now()),
      confirm(false),
      log,
      'settle delivered call charges',
    );
    this.reconciles = new KeyWriter(
      (keys) => this.store.reconciled(keys, this.now()),
      (keys) => {
        for (const k of keys) this.correcting.delete(k);
        confirm(true)(keys);
      },
      log,
      'mark delivered corrections',
    );
  }

  /** Says this owner is alive, sweeps once, and keeps both going (and the reconciler) on timers. */
  async start(): Promise<void> {
    await this.store.beat(this.owner, this.now());
    await this.sweep().catch((err: unknown) => this.log.warn({ err }, 'call charge sweep failed'));
    const beat = setInterval(() => void this.beat(), Math.max(200, this.timing.ownerDeadMs / 6));
    const sweep = setInterval(
      () => void this.sweep().catch((err: unknown) => this.log.warn({ err }, 'call charge sweep failed')),
      this.timing.sweepMs,
    );
    this.timers.push(beat, sweep);
    if (this.usage) {
      const reconcile = setInterval(
        () =>
          void this.reconcile().catch((err: unknown) =>
            this.log.warn({ err }, 'call charge reconcile failed'),
          ),
        this.timing.reconcileMs ?? this.timing.sweepMs,
      );
      this.timers.push(reconcile);
    }
    for (const t of this.timers) t.unref();
  }

  /** Records a call before it goes; answers its key. The call must not go when this throws. */
  async begin(call: { tenant: string; runId: string; attempt: number; step: number; reserved: number }) {
    const key = `${keyPrefix(call)}${randomUUID()}`;
    const { tenant, runId, attempt, reserved } = call;
    await this.store.begin({ key, tenant, runId, attempt, reserved, owner: this.owner }, this.now());
    return key;
  }

  /**
   * The earlier call still recorded under `call`'s key that may have been served, if any: the first
   * with a bill; else the first of unknown outcome, with the bill the usage source knows for it, or
   * its reservation. Its charge is owed under its own key (by its worker, or a sweep), never again.
   */
  async earlier(call: CallKey): Promise<EarlierCall | undefined> {
    const rows = await this.store.callsOf(call.runId, call.attempt, keyPrefix(call));
    const billed = rows.find((r): r is RecordedCall & { tokens: number } => r.tokens !== null);
    if (billed) return { key: billed.key, tokens: billed.tokens, known: true };
    const unknown = rows[0];
    if (!unknown) return undefined;
    const served = await this.usage?.lookup(unknown.key).catch((err: unknown) => {
      this.log.warn({ err: String(err), key: unknown.key }, 'usage lookup failed');
      return null;
    });
    if (served?.served) return { key: unknown.key, tokens: served.tokens, known: true };
    return { key: unknown.key, tokens: unknown.reserved, known: false };
  }

  /** The provider billed the call: its bill is recorded, and charged through the mailbox. */
  async billed(key: string, charge: Charge): Promise<void> {
    // Unrecorded, the bill is still charged from here; only a sweep would charge the reservation.
    await this.store
      .billed(key, charge.tokens)
      .catch((err: unknown) => this.log.warn({ err, key }, 'could not record a call bill'));
    this.mailbox.charge({ ...charge, key });
  }

  /** The provider refused the call (it billed nothing): there is nothing to charge. */
  async unbilled(key: string): Promise<void> {
    // Left behind, the row would be charged its reservation by a sweep once this worker is gone.
    await this.store
      .drop(key)
      .catch((err: unknown) => this.log.warn({ err, key }, 'could not drop an unbilled call'));
  }

  /** The call's outcome is unknown (cut mid-flight, aborted): its worst case is charged, provisionally. */
  async uncertain(key: string, charge: Charge): Promise<void> {
    if (this.usage)
      await this.store
        .provisional(key)
        .catch((err: unknown) => this.log.warn({ err, key }, 'could not mark a provisional charge'));
    this.mailbox.charge({ ...charge, key });
  }

  /** The mailbox delivered these keyed charges: settled (or marked corrected) in the background. */
  settled(delivered: readonly Charge[]): void {
    const charges: string[] = [];
    const corrections: string[] = [];
    for (const c of delivered)
      if (c.key !== undefined) (c.correction === true ? corrections : charges).push(c.key);
    if (charges.length) this.settles.add(charges);
    if (corrections.length) this.reconciles.add(corrections);
  }

  /** Takes the rows of dead owners: charges the unsettled ones; answers how many it took. */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Looks up this owner's due provisional charges and sends their corrections; answers how many. */
  reconcile(): Promise<number> {
    this.reconciling ??= this.reconcileOnce().finally(() => (this.reconciling = undefined));
    return this.reconciling;
  }

  /** Stops the timers and writes what is settled (the mailbox was flushed first). */
  async close(): Promise<void> {
    for (const t of this.timers.splice(0)) clearInterval(t);
    await this.sweeping?.catch(() => undefined);
    await this.reconciling?.catch(() => undefined);
    await this.settles.drain();
    await this.reconciles.drain();
  }

  private async beat(): Promise<void> {
    await this.store
      .beat(this.owner, this.now())
      .catch((err: unknown) => this.log.warn({ err }, 'call charge owner beat failed'));
    // Retries writes that failed.
    void this.settles.flush();
    void this.reconciles.flush();
  }

  private async sweepOnce(): Promise<number> {
    const now = this.now();
    const deadBefore = now - this.timing.ownerDeadMs;
    await this.store.beat(this.owner, now);
    let taken = 0;
    for (;;) {
      const rows = await this.store.claimOrphans(this.owner, deadBefore, SWEEP_BATCH);
      for (const r of rows) {
        if (r.settled) continue; // taken to be reconciled here: its charge was booked
        const tokens = r.tokens ?? r.reserved;
        this.mailbox.charge({ tenant: r.tenant, runId: r.runId, attempt: r.attempt, tokens, key: r.key });
        taken++;
      }
      if (rows.length < SWEEP_BATCH) break;
    }
    if (taken) this.log.warn({ calls: taken }, 'charged the calls of dead workers');
    await this.store.prune(now - this.timing.keepSettledMs, deadBefore, this.usage !== undefined);
    return taken;
  }

  private async reconcileOnce(): Promise<number> {
    const usage = this.usage;
    if (!usage) return 0;
    const madeBefore = this.now() - (this.timing.reconcileAfterMs ?? 0);
    const rows = (await this.store.dueForReconcile(this.owner, madeBefore, RECONCILE_BATCH)).filter(
      (r) => !this.correcting.has(r.key),
    );
    const done = await mapLimit(rows, LOOKUPS_AT_ONCE, (r) => this.reconcileOne(usage, r));
    return done.filter(Boolean).length;
  }

  private async reconcileOne(usage: UsageSource, r: ProvisionalCall): Promise<boolean> {
    const served = await usage.lookup(r.key).catch((err: unknown) => {
      this.log.warn({ err: String(err), key: r.key }, 'usage lookup failed; trying again later');
      return null;
    });
    if (served === null) return false;
    const delta = (served.served ? served.tokens : 0) - r.reserved;
    this.correcting.add(r.key);
    if (delta === 0) {
      this.reconciles.add([r.key]);
      return true;
    }
    this.mailbox.charge({
      tenant: r.tenant,
      runId: r.runId,
      attempt: r.attempt,
      tokens: delta,
      key: r.key,
      correction: true,
    });
    return true;
  }
}
