import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CallCharges } from '../../../src/activities/call-charges';
import { SchedulerMailbox } from '../../../src/activities/mailbox';
import type { UsageSource } from '../../../src/activities/usage-source';
import type { WorkerReport } from '../../../src/contract/scheduler-messages';
import { FleetScheduler } from '../../../src/scheduler';
import type { CallIntentStore } from '../../../src/stores/call-intents/call-intents';
import { openCallIntents } from '../../../src/stores/open';
import { applyReport } from '../../../src/workflows/scheduler-support';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';
import { makeFleet } from '../scheduler/helpers';

/**
 * A worker taken for dead while it was only stalled, over a real store and a real scheduler core:
 * each worker's real mailbox delivers its reports (when the test says) into the core's report
 * handler. Whatever the stalled worker still sends once it resumes, the ledger books every call
 * once, and what it is charged ends at the provider's bill.
 */
let dir: string;
const engines = [sqliteEngine('call-intents.db', () => dir), postgresEngine()];
const TIMING = { ownerDeadMs: 30_000, sweepMs: 10_000, keepSettledMs: 60_000, reconcileAfterMs: 0 };
const log = pino({ level: 'silent' });
const TENANT = 't';

/**
 * The provider: what it billed each call (null: never served). A call it has not served yet is not
 * served as far as a lookup can tell, as with a real provider: a stalled worker may send it later.
 */
class Provider implements UsageSource {
  readonly outcomes = new Map<string, number | null>();
  async lookup(key: string) {
    const t = this.outcomes.get(key);
    return t === null || t === undefined ? { served: false as const } : { served: true as const, tokens: t };
  }
  get bill(): number {
    return [...this.outcomes.values()].reduce<number>((s, t) => s + (t ?? 0), 0);
  }
}

/** The scheduler as the workers' reports reach it: a core that may continue-as-new (`restore`). */
class Scheduler {
  core = makeFleet({ tenants: { [TENANT]: {} } });
  now = 1_000_000;
  readonly client = {
    workflow: {
      getHandle: () => ({
        executeUpdate: async (_u: unknown, o: { args: [WorkerReport] }) => {
          applyReport(this.core, JSON.parse(JSON.stringify(o.args[0])) as WorkerReport, this.now);
        },
      }),
    },
  } as unknown as Client;

  get spent(): number {
    return this.core.tenantStatus(TENANT, this.now)!.ledger.spent;
  }

  restore(): void {
    this.core = FleetScheduler.restore(JSON.parse(JSON.stringify(this.core.snapshot())));
  }
}

describe.each(engines)('call charges of a worker taken for dead ($name)', (engine) => {
  const open: {
    raw: CallIntentStore;
    mailbox: SchedulerMailbox;
    w: CallCharges;
    hold: (on: boolean) => void;
  }[] = [];
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-call-fence-'));
  });
  afterEach(async () => {
    for (const o of open.splice(0)) {
      o.hold(false);
      await o.w.close();
      await o.mailbox.close();
      await o.raw.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A worker process: its own store connection, mailbox and call charges, on the shared location.
   * While `held`, its settle writes wait (it stalls between a delivery and the write it causes).
   */
  async function worker(location: string, sched: Scheduler, provider: Provider, timing = TIMING) {
    const raw = await openCallIntents(location);
    const gate = { held: false, waiting: [] as (() => void)[] };
    const gated = <T>(write: () => Promise<T>): Promise<T> =>
      gate.held ? new Promise<void>((r) => gate.waiting.push(r)).then(write) : write();
    const store: CallIntentStore = {
      ...raw,
      settle: (keys, owner, now) => gated(() => raw.settle(keys, owner, now)),
      reconciled: (keys, owner, now) => gated(() => raw.reconciled(keys, owner, now)),
    };
    const hold = (on: boolean) => {
      gate.held = on;
      if (!on) for (const go of gate.waiting.splice(0)) go();
    };
    const mailbox = new SchedulerMailbox(sched.client, 'scheduler', 3_600_000, () => [], log);
    const w = new CallCharges(store, mailbox, timing, log, () => sched.now, provider);
    mailbox.onCharged = (delivered) => w.settled(delivered);
    open.push({ raw, mailbox, w, hold });

    /** Delivers its report, writes what that settled (unless held), and delivers the confirmations. */
    const deliver = async () => {
      await mailbox.flush(true);
      if (gate.held) return;
      await w.close();
      await mailbox.flush(true);
    };
    const call = (run: string, reserved: number) =>
      w.begin({ tenant: TENANT, runId: run, attempt: 1, step: 1, reserved });
    const billed = async (key: string, run: string, tokens: number) => {
      provider.outcomes.set(key, tokens);
      await w.billed(key, { tenant: TENANT, runId: run, attempt: 1, tokens });
    };
    return { w, deliver, call, billed, hold };
  }

  it.skipIf(engine.skip)(
    "books each call of a stalled worker once: the sweep's charge, never the worker's held one",
    async () => {
      const location = await engine.location();
      const sched = new Scheduler();
      const provider = new Provider();
      const a = await worker(location, sched, provider);
      const done = await a.call('run-0', 50);
      await a.billed(done, 'run-0', 50);
      await a.deliver();
      const held = await a.call('run-1', 100);
      await a.billed(held, 'run-1', 80); // its charge waits in a's mailbox: a stalls
      const inFlight = await a.call('run-2', 100);
      const fenced = a.w.owner;

      sched.now += TIMING.ownerDeadMs + 1;
      const b = await worker(location, sched, provider);
      expect(await b.w.sweep()).toBe(2);
      await b.deliver(); // charged, settled, confirmed: the scheduler forgets both keys
      expect(sched.spent).toBe(50 + 80 + 100);

      // a resumes: its call ends, and its mailbox delivers what it held.
      await a.billed(inFlight, 'run-2', 70);
      await a.deliver();
      expect(sched.spent).toBe(50 + 80 + 100);
      // b's usage lookup corrects the worst case it charged for the call cut off from a.
      sched.now += 1;
      expect(await b.w.reconcile()).toBe(1);
      await b.deliver();
      expect(sched.spent).toBe(provider.bill);

      // a goes on under a new owner id: its new calls are booked.
      const later = await a.call('run-3', 100);
      expect(a.w.owner).not.toBe(fenced);
      await a.billed(later, 'run-3', 40);
      await a.deliver();
      sched.restore();
      await a.deliver();
      expect(sched.spent).toBe(provider.bill);
      expect(provider.bill).toBe(50 + 80 + 70 + 40);
    },
  );

  it.skipIf(engine.skip)(
    "books a stalled worker's correction once when a sweep took its call to reconcile",
    async () => {
      const location = await engine.location();
      const sched = new Scheduler();
      const provider = new Provider();
      const a = await worker(location, sched, provider);
      const cut = await a.call('run-1', 100);
      await a.w.uncertain(cut, { tenant: TENANT, runId: 'run-1', attempt: 1, tokens: 100 });
      await a.deliver();
      provider.outcomes.set(cut, 30);
      sched.now += 1;
      expect(await a.w.reconcile()).toBe(1); // its correction (−70) waits in a's mailbox: a stalls

      sched.now += TIMING.ownerDeadMs + 1;
      const b = await worker(location, sched, provider);
      expect(await b.w.sweep()).toBe(0); // settled: nothing to charge, only to reconcile
      expect(await b.w.reconcile()).toBe(1);
      await b.deliver();
      expect(sched.spent).toBe(30);
      await a.deliver();
      expect(sched.spent).toBe(30);
    },
  );

  it.skipIf(engine.skip)(
    "charges a stalled worker's call sent after the sweep's lookup found it unserved, once",
    async () => {
      const location = await engine.location();
      const sched = new Scheduler();
      const provider = new Provider();
      const a = await worker(location, sched, provider);
      const late = await a.call('run-1', 100); // recorded; a stalls before it sends it
      const early = await a.call('run-2', 100);

      sched.now += TIMING.ownerDeadMs + 1;
      const b = await worker(location, sched, provider);
      expect(await b.w.sweep()).toBe(2);
      await b.deliver();
      expect(sched.spent).toBe(200);
      // The lookup sees neither call: `late` not yet, `early` is billed by its maker first.
      await a.billed(early, 'run-2', 30);
      sched.now += 1;
      expect(await b.w.reconcile()).toBe(2);
      await b.deliver();
      expect(sched.spent).toBe(30);

      // a resumes and sends `late`: the provider bills it, and a charges what the lookup missed.
      await a.billed(late, 'run-1', 60);
      await a.deliver();
      expect(sched.spent).toBe(90);
      // Sent again (a retried delivery, a restored scheduler), it is booked once.
      await a.billed(late, 'run-1', 60);
      sched.restore();
      await a.deliver();
      expect(sched.spent).toBe(provider.bill);
      expect(provider.bill).toBe(90);
    },
  );

  it.skipIf(engine.skip)(
    "keeps a taken call's worst case until it is sent late or its wait is over: spent + reserved never drops below what is owed",
    async () => {
      const location = await engine.location();
      const sched = new Scheduler();
      const provider = new Provider();
      const timing = { ...TIMING, reconcileTakenAfterMs: 120_000 };
      const a = await worker(location, sched, provider, timing);
      const late = await a.call('run-1', 100); // a stalls before it sends it
      const never = await a.call('run-2', 100); // a dies before it sends it
      sched.now += TIMING.ownerDeadMs + 1;
      const b = await worker(location, sched, provider, timing);
      expect(await b.w.sweep()).toBe(2);
      await b.deliver();
      sched.now += 1;
      // Unserved as far as the provider can tell, and taken from a worker that may be stalled: no refund yet.
      expect(await b.w.reconcile()).toBe(0);
      await b.deliver();
      expect(sched.spent).toBe(200);
      // a resumes and sends `late`: its bill is recorded for b's reconciler, nothing is charged twice.
      await a.billed(late, 'run-1', 60);
      await a.deliver();
      expect(sched.spent).toBe(200);
      expect(await b.w.reconcile()).toBe(1);
      await b.deliver();
      expect(sched.spent).toBe(160);
      // Past the wait, the call never sent is refunded.
      sched.now += 120_000;
      expect(await b.w.reconcile()).toBe(1);
      await b.deliver();
      expect(sched.spent).toBe(provider.bill);
      expect(provider.outcomes.has(never)).toBe(false);
      expect(provider.bill).toBe(60);
    },
  );

  type Op =
    | { k: 'call'; w: number; reserved: number }
    | {
        k: 'end';
        w: number;
        i: number;
        how: 'billed' | 'uncertain' | 'unbilled';
        tokens: number;
        served: boolean;
      }
    | { k: 'deliver'; w: number }
    | { k: 'sweep'; w: number }
    | { k: 'reconcile'; w: number }
    | { k: 'hold'; w: number; on: boolean }
    | { k: 'stall' }
    | { k: 'restore' };
  const w = fc.nat(1);
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ k: fc.constant('call' as const), w, reserved: fc.integer({ min: 1, max: 100 }) }),
    fc.record({
      k: fc.constant('end' as const),
      w,
      i: fc.nat(20),
      how: fc.constantFrom('billed' as const, 'uncertain' as const, 'unbilled' as const),
      tokens: fc.nat(100),
      served: fc.boolean(),
    }),
    fc.record({ k: fc.constant('deliver' as const), w }),
    fc.record({ k: fc.constant('sweep' as const), w }),
    fc.record({ k: fc.constant('reconcile' as const), w }),
    fc.record({ k: fc.constant('hold' as const), w, on: fc.boolean() }),
    fc.record({ k: fc.constant('stall' as const) }),
    fc.record({ k: fc.constant('restore' as const) }),
  );

  /** Plays `ops` on two workers over one store and one scheduler; the ledger's spent and the bill after. */
  async function play(ops: Op[]): Promise<{ spent: number; bill: number }> {
    const location = await engine.location();
    const sched = new Scheduler();
    const provider = new Provider();
    const workers = [await worker(location, sched, provider), await worker(location, sched, provider)];
    const flying: { w: number; key: string; run: string; reserved: number }[][] = [[], []];
    let runs = 0;
    const end = async (x: Extract<Op, { k: 'end' }>) => {
      const calls = flying[x.w]!;
      const c = calls.splice(x.i % Math.max(1, calls.length), 1)[0];
      if (!c) return;
      const tokens = Math.min(x.tokens, c.reserved);
      const wk = workers[x.w]!;
      if (x.how === 'billed') return wk.billed(c.key, c.run, tokens);
      if (x.how === 'unbilled') {
        provider.outcomes.set(c.key, null);
        return wk.w.unbilled(c.key);
      }
      provider.outcomes.set(c.key, x.served ? tokens : null);
      return wk.w.uncertain(c.key, { tenant: TENANT, runId: c.run, attempt: 1, tokens: c.reserved });
    };
    for (const op of ops) {
      sched.now += 1_000;
      if (op.k === 'call') {
        const run = `run-${++runs}`;
        const key = await workers[op.w]!.call(run, op.reserved);
        flying[op.w]!.push({ w: op.w, key, run, reserved: op.reserved });
      } else if (op.k === 'end') await end(op);
      else if (op.k === 'deliver') await workers[op.w]!.deliver();
      else if (op.k === 'sweep') await workers[op.w]!.w.sweep();
      else if (op.k === 'reconcile') await workers[op.w]!.w.reconcile();
      else if (op.k === 'hold') workers[op.w]!.hold(op.on);
      else if (op.k === 'stall') sched.now += TIMING.ownerDeadMs + 1;
      else sched.restore();
    }
    // Every call ends; then both workers deliver, sweep and reconcile until nothing is owed.
    for (const wk of workers) wk.hold(false);
    for (const [i, calls] of flying.entries())
      for (const c of calls.splice(0)) {
        provider.outcomes.set(c.key, c.reserved);
        await workers[i]!.billed(c.key, c.run, c.reserved);
      }
    for (let round = 0; round < 4; round++)
      for (const wk of workers) {
        await wk.deliver();
        await wk.w.sweep();
        await wk.deliver();
        await wk.w.reconcile();
        await wk.deliver();
      }
    return { spent: sched.spent, bill: provider.bill };
  }

  it.skipIf(engine.skip)(
    "whatever the interleaving of two workers' calls, sweeps, deliveries and stalls, every call is booked once",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), async (ops) => {
          const { spent, bill } = await play(ops);
          expect(spent).toBe(bill);
        }),
        { numRuns: engine.name === 'SQLite' ? 150 : 25 },
      );
    },
    300_000,
  );

  it.skipIf(engine.skip)(
    'books a call once when its stalled maker bills it after the sweeper that took it looks dead too',
    async () => {
      const ops: Op[] = [
        { k: 'call', w: 0, reserved: 2 },
        { k: 'stall' },
        { k: 'sweep', w: 1 },
        { k: 'stall' },
        { k: 'end', w: 0, i: 0, how: 'billed', tokens: 1, served: false },
      ];
      expect(await play(ops)).toEqual({ spent: 1, bill: 1 });
    },
  );
});
