import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { chargeId, ownerId } from '../scheduler';
import type { Charge } from '../scheduler/types';
import { TakerFenced } from '../stores/call-intents/call-intents';
import type { CallIntentStore, ProvisionalCall, RecordedCall } from '../stores/call-intents/call-intents';
import { mapLimit } from '../util/map-limit';
import { KeyWriter } from './key-writer';
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
  /**
   * How long after its call a provisional charge taken over from a worker taken for dead waits
   * before a lookup that finds it unserved refunds it (the worker may only be stalled, and send it).
   */
  reconcileTakenAfterMs?: number;
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

/** Dead owners fenced per claim: a sweep claims until fewer come back. */
const SWEEP_OWNERS = 20;
/** Times `begin` tries a new owner id when it finds its owner fenced, before it gives up. */
const BEGIN_TRIES = 3;
/** Provisional charges looked up per reconcile pass, and at once. */
const RECONCILE_BATCH = 200;
const LOOKUPS_AT_ONCE = 8;

/** The suffix of the key of a late bill's charge: what a lookup missed of a call taken over. */
const LATE = '#late';

/** A new owner id: this process, and a random part (a restart, or a fence, is a new owner). */
const newOwner = () => `${hostname()}/${process.pid}/${randomUUID()}`;

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
 *
 * A worker taken for dead may be alive (stalled longer than `ownerDeadMs`): a sweep fences its owner
 * id, in the transaction that takes its rows. From then on its rows are the sweeper's (only the
 * owner of a row records its bill, settles it, confirms it), it records no call under that id (it
 * goes on under a new one), and its charges, each naming its owner, are not booked: the sweep's
 * report fences the owner at the scheduler no later than the sweep's own charges for its calls,
 * hence before any of them is confirmed and forgotten. What remains is a key pushed out of the
 * scheduler's bounded memory (`charge-keys.ts`) before a sweep came, and a fence pushed out of it
 * while a stalled worker still held charges (`MAX_FENCED_OWNERS` fences later).
 */
export class CallCharges {
  /** The current owner id: a new one after a restart, or after a sweep fenced the previous one. */
  private id = newOwner();
  /** `id` once the store knows it. */
  private joined: Promise<string> | undefined;
  /** The owner each call on its way was recorded under: its charge names that owner. */
  private readonly begun = new Map<string, string>();
  private timers: NodeJS.Timeout[] = [];
  private readonly settles: KeyWriter;
  private readonly reconciles: KeyWriter;
  /** Keys whose correction is on its way (not looked up again meanwhile). */
  private readonly correcting = new Set<string>();
  private sweeping: Promise<number> | undefined;
  private reconciling: Promise<number> | undefined;

  constructor(
    private readonly store: CallIntentStore,
    private readonly mailbox: Pick<SchedulerMailbox, 'charge' | 'confirm' | 'fence'>,
    private readonly timing: CallChargeTiming,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly usage: UsageSource | undefined = undefined,
  ) {
    const confirm = (correction: boolean) => (keys: readonly string[]) =>
      this.mailbox.confirm(keys.map((k) => chargeId(k, correction)));
    this.settles = new KeyWriter(
      (keys) => this.store.settle(keys, this.id, this.now()),
      (_, settled) => confirm(false)(settled),
      log,
      'settle delivered call charges',
    );
    this.reconciles = new KeyWriter(
      (keys) => this.store.reconciled(keys, this.id, this.now()),
      (keys, marked) => {
        for (const k of keys) this.correcting.delete(k);
        confirm(true)(marked);
      },
      log,
      'mark delivered corrections',
    );
  }

  /** This process's current owner id (it changes when a sweep fenced the previous one). */
  get owner(): string {
    return this.id;
  }

  /** Says this owner is alive, sweeps once, and keeps both going (and the reconciler) on timers. */
  async start(): Promise<void> {
    await this.current();
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
    for (let tries = 0; tries < BEGIN_TRIES; tries++) {
      const owner = await this.current();
      if (await this.store.begin({ key, tenant, runId, attempt, reserved, owner }, this.now())) {
        this.begun.set(key, owner);
        return key;
      }
      this.fenced(owner);
    }
    throw new Error('could not record a call: this worker is fenced as soon as it joins');
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

  /**
   * The provider billed the call: its bill is recorded, and charged through the mailbox; nothing
   * when a sweep took the call over (it charges the call, and its usage source reconciles it).
   */
  async billed(key: string, charge: Charge): Promise<void> {
    const owner = this.ownerOf(key);
    // Unrecorded, the bill is still charged from here (the scheduler drops it once `owner` is fenced).
    const own = await this.store.billed(key, owner, charge.tokens).catch((err: unknown) => {
      this.log.warn({ err, key }, 'could not record a call bill');
      return true;
    });
    if (own) this.mailbox.charge({ ...charge, key, owner: ownerId(owner) });
    else await this.billedLate(key, owner, charge);
  }

  /**
   * A sweep took the call over while this worker stalled, charged its reservation, and may have found
   * it unserved (it was sent after the sweep's lookup) and refunded it. The bill is recorded for the
   * taker's reconciler; if a lookup decided first, what it missed is charged under this worker's new
   * owner id as an extra correction of its own key (`LATE`), booked once.
   */
  private async billedLate(key: string, owner: string, charge: Charge): Promise<void> {
    this.fenced(owner);
    const decided = await this.store.billOnce(key, { madeBy: owner }, charge.tokens).catch((err: unknown) => {
      this.log.warn({ err, key }, 'could not record the bill of a call taken over');
      return undefined;
    });
    if (decided === undefined) {
      this.log.warn({ key, tokens: charge.tokens }, 'a call taken over was billed after its row was gone');
      return;
    }
    const missed = charge.tokens - decided;
    if (missed <= 0) return;
    const now = await this.current();
    this.log.warn({ key, missed }, 'a call taken over was billed after its lookup: charging what it missed');
    this.mailbox.charge({
      ...charge,
      tokens: missed,
      key: `${key}${LATE}`,
      correction: true,
      owner: ownerId(now),
    });
  }

  /** The provider refused the call (it billed nothing): there is nothing to charge. */
  async unbilled(key: string): Promise<void> {
    // Left behind, the row would be charged its reservation by a sweep once this worker is gone.
    await this.store
      .drop(key, this.ownerOf(key))
      .catch((err: unknown) => this.log.warn({ err, key }, 'could not drop an unbilled call'));
  }

  /** The call's outcome is unknown (cut mid-flight, aborted): its worst case is charged, provisionally. */
  async uncertain(key: string, charge: Charge): Promise<void> {
    const owner = this.ownerOf(key);
    const own =
      !this.usage ||
      (await this.store.provisional(key, owner).catch((err: unknown) => {
        this.log.warn({ err, key }, 'could not mark a provisional charge');
        return true;
      }));
    if (own) this.mailbox.charge({ ...charge, key, owner: ownerId(owner) });
    else {
      // Taken over: the taker charged its reservation; a bill the provider already shows is the late one.
      const served = await this.usage?.lookup(key).catch(() => null);
      if (served?.served) await this.billedLate(key, owner, { ...charge, tokens: served.tokens });
    }
  }

  /** The mailbox delivered these keyed charges: settled (or marked corrected) in the background. */
  settled(delivered: readonly Charge[]): void {
    const charges: string[] = [];
    const corrections: string[] = [];
    for (const c of delivered)
      if (c.key !== undefined && !c.key.endsWith(LATE))
        (c.correction === true ? corrections : charges).push(c.key);
    if (charges.length) this.settles.add(charges);
    if (corrections.length) this.reconciles.add(corrections);
  }

  /** Fences dead owners and takes their rows: charges the unsettled ones; answers how many it charged. */
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

  /** The current owner id, known to the store. */
  private current(): Promise<string> {
    const id = this.id;
    this.joined ??= this.store.join(id, this.now()).then(
      () => id,
      (err: unknown) => {
        if (this.id === id) this.joined = undefined;
        throw err;
      },
    );
    return this.joined;
  }

  /** A sweep fenced `owner` (or it was pruned): a new owner id takes over from here (once). */
  private fenced(owner: string): void {
    if (this.id !== owner) return;
    this.log.warn(
      { owner },
      'this worker was taken for dead and its calls were charged: going on as a new owner',
    );
    this.id = newOwner();
    this.joined = undefined;
  }

  /** The owner `key` was recorded under (forgotten: its outcome is being reported now). */
  private ownerOf(key: string): string {
    const owner = this.begun.get(key) ?? this.id;
    this.begun.delete(key);
    return owner;
  }

  private async beat(): Promise<void> {
    const owner = await this.current().catch(() => undefined);
    if (owner !== undefined) {
      const alive = await this.store.beat(owner, this.now()).catch((err: unknown) => {
        this.log.warn({ err }, 'call charge owner beat failed');
        return true;
      });
      if (!alive) this.fenced(owner);
    }
    // Retries writes that failed.
    void this.settles.flush();
    void this.reconciles.flush();
  }

  private async sweepOnce(): Promise<number> {
    const now = this.now();
    const deadBefore = now - this.timing.ownerDeadMs;
    let owner = await this.current();
    if (!(await this.store.beat(owner, now))) {
      this.fenced(owner);
      owner = await this.current();
    }
    let charged = 0;
    for (;;) {
      const taken = await this.store
        .claimOrphans(owner, deadBefore, now, SWEEP_OWNERS)
        .catch((err: unknown) => {
          if (err instanceof TakerFenced) this.fenced(owner);
          throw err;
        });
      // Before their charges, in the same report or an earlier one: the scheduler stops booking
      // the fenced owners' own charges (also those of the makers of calls a dead sweeper had taken).
      const fences = new Set([...taken.owners, ...taken.calls.flatMap((c) => (c.madeBy ? [c.madeBy] : []))]);
      if (fences.size) this.mailbox.fence([...fences].map(ownerId));
      for (const r of taken.calls) {
        if (r.settled) continue; // taken to be reconciled here: its charge was booked
        // A provisional row is charged its worst case: its reconciler corrects from there to the bill.
        const tokens = r.provisional ? r.reserved : (r.tokens ?? r.reserved);
        this.mailbox.charge({
          tenant: r.tenant,
          runId: r.runId,
          attempt: r.attempt,
          tokens,
          key: r.key,
          owner: ownerId(owner),
        });
        charged++;
      }
      if (taken.owners.length < SWEEP_OWNERS) break;
    }
    if (charged) this.log.warn({ calls: charged }, 'charged the calls of dead workers');
    await this.store.prune(now - this.timing.keepSettledMs, deadBefore, this.usage !== undefined);
    return charged;
  }

  private async reconcileOnce(): Promise<number> {
    const usage = this.usage;
    if (!usage) return 0;
    const owner = this.id;
    const madeBefore = this.now() - (this.timing.reconcileAfterMs ?? 0);
    const rows = (await this.store.dueForReconcile(owner, madeBefore, RECONCILE_BATCH)).filter(
      (r) => !this.correcting.has(r.key),
    );
    const done = await mapLimit(rows, LOOKUPS_AT_ONCE, (r) => this.reconcileOne(usage, owner, r));
    return done.filter(Boolean).length;
  }

  private async reconcileOne(usage: UsageSource, owner: string, r: ProvisionalCall): Promise<boolean> {
    const served = await usage.lookup(r.key).catch((err: unknown) => {
      this.log.warn({ err: String(err), key: r.key }, 'usage lookup failed; trying again later');
      return null;
    });
    if (served === null) return false;
    // A call taken over from a worker that may only be stalled: unserved so far, it may still be sent.
    const takenAfter = this.timing.reconcileTakenAfterMs ?? 0;
    if (
      !served.served &&
      r.madeBy !== undefined &&
      r.madeBy !== owner &&
      (r.madeAt ?? 0) > this.now() - takenAfter
    )
      return false;
    // A late bill recorded by the call's stalled maker wins over a lookup that came before the call.
    const billed = await this.store.billOnce(r.key, { owner }, served.served ? served.tokens : 0);
    if (billed === undefined) return false;
    const delta = billed - r.reserved;
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
      owner: ownerId(owner),
    });
    return true;
  }
}
