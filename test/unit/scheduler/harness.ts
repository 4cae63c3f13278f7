import fc from 'fast-check';
import { FleetScheduler, PRIORITIES } from '../../../src/scheduler';
import type { BudgetPeriod, ModelObservation, Priority, ReleaseOutcome } from '../../../src/scheduler';
import { LINGER_LEASE_TTLS } from '../../../src/scheduler/lingers';
import { T0, fleetSettings, openGovernor } from './helpers';

/** One step of a random workload; indices pick among whatever exists at that moment. */
export type Op =
  | { k: 'tick'; ms: number }
  | { k: 'tenant'; t: number; weight: number; maxQueued: number; maxInFlight: number; budget: number | null }
  | { k: 'submit'; items: { t: number; lane: number; cost: number }[] }
  | { k: 'resubmit'; pick: number }
  | { k: 'admit'; max: number | undefined }
  | { k: 'release'; pick: number; used: number; outcome: ReleaseOutcome }
  | { k: 'renew'; pick: number; used: number }
  | { k: 'cancel'; pick: number }
  | { k: 'expire' }
  | { k: 'observe'; throttled: number; retryAfter: number; remaining: number | undefined }
  | { k: 'patch'; concurrency: number | undefined; standard: number | undefined; batch: number | undefined }
  | { k: 'drain'; intake: 'refuse' | 'hold' }
  | { k: 'resume' };

export const TENANTS = 4;
export const PERIODS: BudgetPeriod[] = ['hour', 'day', 'none', 'hour'];

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 300_000 }).map((ms) => ({ k: 'tick' as const, ms })) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('tenant' as const),
      t: fc.integer({ min: 0, max: TENANTS - 1 }),
      weight: fc.constantFrom(0.5, 1, 2, 3),
      maxQueued: fc.integer({ min: 0, max: 30 }),
      maxInFlight: fc.integer({ min: 0, max: 6 }),
      budget: fc.option(fc.integer({ min: 0, max: 4000 }), { nil: null }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc
      .array(
        fc.record({
          t: fc.integer({ min: 0, max: TENANTS }),
          lane: fc.integer({ min: 0, max: 2 }),
          cost: fc.integer({ min: 1, max: 600 }),
        }),
        { minLength: 1, maxLength: 8 },
      )
      .map((items) => ({ k: 'submit' as const, items })),
  },
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ k: 'resubmit' as const, pick })) },
  {
    weight: 4,
    arbitrary: maybe(fc.integer({ min: 0, max: 5 })).map((max) => ({ k: 'admit' as const, max })),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('release' as const),
      pick: fc.nat(),
      used: fc.integer({ min: 0, max: 900 }),
      outcome: fc.constantFrom<ReleaseOutcome>('completed', 'completed', 'failed', 'cancelled'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('renew' as const),
      pick: fc.nat(),
      used: fc.integer({ min: 0, max: 600 }),
    }),
  },
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ k: 'cancel' as const, pick })) },
  { weight: 1, arbitrary: fc.constant({ k: 'expire' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('observe' as const),
      throttled: fc.integer({ min: 0, max: 2 }),
      retryAfter: fc.constantFrom(0, 0, 1500, 30_000),
      remaining: maybe(fc.integer({ min: 0, max: 100 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('patch' as const),
      concurrency: maybe(fc.integer({ min: 0, max: 12 })),
      standard: maybe(fc.constantFrom(0, 0.1, 0.3)),
      batch: maybe(fc.constantFrom(0, 0.05, 0.5)),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { k: 'drain' as const, intake: 'refuse' as const },
      { k: 'drain' as const, intake: 'hold' as const },
    ),
  },
  { weight: 2, arbitrary: fc.constant({ k: 'resume' as const }) },
);

export const tenantId = (i: number) => `t${i}`;

/** Creates the fleet every random workload starts from (tenant t4 never exists: unknown tenant). */
export function startFleet(): FleetScheduler {
  const s = FleetScheduler.create(
    {
      settings: fleetSettings({ concurrency: 8, leaseTtlSeconds: 120, globalMaxQueued: 60 }),
      governor: openGovernor({
        maxConcurrency: 10,
        minConcurrency: 1,
        initialTokensPerMinute: 20_000,
        minTokensPerMinute: 2000,
        maxTokensPerMinute: 40_000,
      }),
    },
    T0,
  );
  for (let i = 0; i < TENANTS; i++) {
    s.upsertTenant(
      tenantId(i),
      {
        weight: 1,
        maxQueued: 20,
        maxInFlight: 4,
        budget: { tokens: i === 1 ? 3000 : null, period: PERIODS[i] ?? 'none' },
      },
      T0,
    );
  }
  return s;
}

/** Drives a scheduler through ops, tracking the runs it knows about so indices can pick them. */
export class Driver {
  now = T0;
  private nextId = 0;
  /** Runs the driver believes are in flight / queued / were expired (for re-submission). */
  readonly inFlight = new Map<
    string,
    { tenant: string; lane: Priority; attempt: number; reserved: number; cost: number; used: number }
  >();
  /** Tokens charged to each tenant's ledger, with when (the model of `spent`). */
  readonly charges: { tenant: string; at: number; used: number }[] = [];
  draining = false;
  readonly queued = new Map<string, { tenant: string; lane: Priority; attempt: number; cost: number }>();
  readonly expired: { runId: string; tenant: string; lane: Priority; attempt: number; cost: number }[] = [];
  /** Each budgeted tenant's reservation kept after its leases expired, and until when (`lingers.ts`). */
  readonly lingers = new Map<string, { tokens: number; until: number }>();
  /** Whether each tenant has a budget (tenant t1 starts with one). */
  readonly budgeted = new Map<string, boolean>([[tenantId(1), true]]);

  constructor(readonly s: FleetScheduler) {}

  /** What the model says tenant `t` holds in reserve: its leases' reservations and its linger. */
  reservedOf(t: string): number {
    const leases = [...this.inFlight.values()].filter((f) => f.tenant === t);
    return leases.reduce((x, f) => x + f.reserved, 0) + (this.lingers.get(t)?.tokens ?? 0);
  }

  /** A driver in the same state, driving another scheduler (e.g. a restored copy). */
  fork(s: FleetScheduler): Driver {
    const d = new Driver(s);
    d.now = this.now;
    d.nextId = this.nextId;
    d.draining = this.draining;
    for (const [k, v] of this.inFlight) d.inFlight.set(k, { ...v });
    for (const [k, v] of this.queued) d.queued.set(k, { ...v });
    for (const [k, v] of this.lingers) d.lingers.set(k, { ...v });
    for (const [k, v] of this.budgeted) d.budgeted.set(k, v);
    d.expired.push(...this.expired.map((e) => ({ ...e })));
    d.charges.push(...this.charges);
    return d;
  }

  /** Applies one op; returns whatever the scheduler returned (for equivalence checks). */
  apply(op: Op): unknown {
    const s = this.s;
    switch (op.k) {
      case 'tick':
        this.now += op.ms;
        return null;
      case 'tenant': {
        const period = PERIODS[op.t] ?? 'none';
        s.upsertTenant(
          tenantId(op.t),
          {
            weight: op.weight,
            maxQueued: op.maxQueued,
            maxInFlight: op.maxInFlight,
            budget: { tokens: op.budget, period },
          },
          this.now,
        );
        this.budgeted.set(tenantId(op.t), op.budget !== null);
        return null;
      }
      case 'submit': {
        const subs = op.items.map((it) => ({
          runId: `r${this.nextId++}`,
          tenant: tenantId(it.t),
          priority: PRIORITIES[it.lane] as Priority,
          cost: it.cost,
        }));
        const res = s.submit(subs, this.now);
        res.forEach((r, i) => {
          const u = subs[i]!;
          if (r.accepted && !r.duplicate)
            this.queued.set(u.runId, { tenant: u.tenant, lane: u.priority, attempt: 0, cost: u.cost });
        });
        return res;
      }
      case 'resubmit': {
        if (this.expired.length === 0) return null;
        const [e] = this.expired.splice(op.pick % this.expired.length, 1);
        const res = s.submit(
          [{ runId: e!.runId, tenant: e!.tenant, priority: e!.lane, cost: e!.cost, attempt: e!.attempt + 1 }],
          this.now,
        );
        if (res[0]?.accepted && !res[0].duplicate)
          this.queued.set(e!.runId, {
            tenant: e!.tenant,
            lane: e!.lane,
            attempt: e!.attempt + 1,
            cost: e!.cost,
          });
        return res;
      }
      case 'admit': {
        const adm = s.admit(this.now, op.max);
        for (const a of adm) {
          const q = this.queued.get(a.runId)!;
          this.queued.delete(a.runId);
          this.inFlight.set(a.runId, {
            tenant: a.tenant,
            lane: a.priority,
            attempt: a.attempt,
            reserved: a.reserved,
            cost: q.cost,
            used: 0,
          });
        }
        return adm;
      }
      case 'release': {
        const id = this.pick(this.inFlight, op.pick);
        if (id === undefined) return null;
        const f = this.inFlight.get(id)!;
        s.release([{ runId: id, attempt: f.attempt, usedTokens: op.used, outcome: op.outcome }], this.now);
        this.charges.push({ tenant: f.tenant, at: this.now, used: Math.max(f.used, op.used) });
        this.inFlight.delete(id);
        return null;
      }
      case 'renew': {
        const id = this.pick(this.inFlight, op.pick);
        if (id === undefined) return null;
        const f = this.inFlight.get(id)!;
        s.renew([{ runId: id, attempt: f.attempt, usedTokens: op.used }], this.now);
        f.used = Math.max(f.used, op.used);
        return null;
      }
      case 'cancel': {
        const id = this.pick(this.queued, op.pick);
        const out = s.cancel(id === undefined ? [] : [id], this.now);
        if (id !== undefined) this.queued.delete(id);
        return out;
      }
      case 'expire': {
        const out = s.expireLeases(this.now);
        for (const [t, g] of this.lingers) if (g.until <= this.now) this.lingers.delete(t);
        for (const a of out) {
          const f = this.inFlight.get(a.runId)!;
          this.inFlight.delete(a.runId);
          this.charges.push({ tenant: f.tenant, at: this.now, used: f.used });
          // What the lease reserved beyond the usage it reported is kept for its calls under way.
          const keep = f.reserved - f.used;
          if (keep > 0 && this.budgeted.get(f.tenant)) {
            const g = this.lingers.get(f.tenant);
            const until = this.now + LINGER_LEASE_TTLS * 120_000;
            this.lingers.set(f.tenant, {
              tokens: (g?.tokens ?? 0) + keep,
              until: Math.max(g?.until ?? 0, until),
            });
          }
          this.expired.push({
            runId: a.runId,
            tenant: a.tenant,
            lane: a.priority,
            attempt: a.attempt,
            cost: f.cost,
          });
        }
        return out;
      }
      case 'observe': {
        const o: ModelObservation = {
          at: this.now,
          calls: 5,
          throttled: op.throttled,
          maxRetryAfterMs: op.retryAfter,
          tokens: 100,
        };
        if (op.remaining !== undefined) Object.assign(o, { remainingTokens: op.remaining, limitTokens: 100 });
        s.observe([o], this.now);
        return null;
      }
      case 'patch':
        s.patchSettings({ concurrency: op.concurrency, floors: { standard: op.standard, batch: op.batch } });
        return null;
      case 'drain':
        s.drain(op.intake, this.now);
        this.draining = true;
        return null;
      case 'resume':
        s.resume(this.now);
        this.draining = false;
        return null;
    }
  }

  private pick<V>(m: Map<string, V>, i: number): string | undefined {
    if (m.size === 0) return undefined;
    return [...m.keys()][i % m.size];
  }
}
