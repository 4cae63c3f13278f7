import type { CoreState } from './core';
import { zeroCounters } from './counters';
import { DEFAULT_GOVERNOR } from './defaults';
import { newGovernor } from './governor';
import type { GovernorState } from './governor';
import { earliestBudgetRoll, refreshTenant } from './eligibility';
import { LaneQueue, pushUnit } from './fair-queue';
import { MAX_SNAPSHOT_KEY_SLOTS } from './limits';
import { laneTuples, type PoolIndex } from './snapshot-lanes';
import { LeaseTable } from './leases';
import { EndedRuns } from './ended';
import { LedgerLog } from './ledger-log';
import { ChargeKeys, FencedOwners } from './charge-keys';
import { restoredFigure } from './ledger';
import { restoreLingers } from './lingers';
import type { Lane, QueuedUnit, TenantState } from './queue-state';
import { createTenant } from './tenants';
import { decodeCompact, encodeV3 } from './snapshot-compact';
import type { LeaseTuple, SchedulerSnapshot, PlainSnapshot, TenantSnapshot } from './snapshot-format';
import { DEFAULT_POOL } from './pools';
import type { TenantSettings } from './types';

/** A governor's state, copied (its nested records too). */
function copyGovernor(g: GovernorState): GovernorState {
  return {
    ...g,
    served: { ...g.served },
    recent: { ...g.recent },
    admitted: { ...g.admitted },
    ...(g.servedCalls ? { servedCalls: { ...g.servedCalls } } : {}),
    ...(g.recentCalls ? { recentCalls: { ...g.recentCalls } } : {}),
    ...(g.breaker ? { breaker: { ...g.breaker } } : {}),
    ...(g.latency ? { latency: { ...g.latency } } : {}),
  };
}

/** The compact snapshot (version 3) that continue-as-new carries. */
export function toSnapshot(s: CoreState): SchedulerSnapshot {
  return encodeV3(toPlain(s));
}

/** Restores a compact snapshot (version 2 or 3); any other version is refused. */
export function fromSnapshot(snap: SchedulerSnapshot, endedMemory?: number): CoreState {
  const v: unknown = snap.v;
  if (v !== 2 && v !== 3) throw new Error(`Unsupported scheduler snapshot version ${String(v)}`);
  return fromPlain(decodeCompact(snap), endedMemory);
}

function toPlain(s: CoreState): PlainSnapshot {
  const pools: PoolIndex = new Map([...s.pools.keys()].map((name, i) => [name, i + 1]));
  const tenants: TenantSnapshot[] = [];
  const budget = { left: MAX_SNAPSHOT_KEY_SLOTS };
  for (const t of s.tenants.values()) {
    const l = t.ledger;
    const linger = s.lingers.get(t.id);
    const snap: TenantSnapshot = {
      id: t.id,
      ord: t.ord,
      settings: cloneSettings(t.settings),
      ledger: linger
        ? [l.periodStart, l.periodEnd, l.reserved, l.spent, linger.tokens, linger.until]
        : [l.periodStart, l.periodEnd, l.reserved, l.spent],
      rate: { ...t.rate },
      seen: t.seenAt,
      tags: [t.flows[0].tag, t.flows[1].tag, t.flows[2].tag],
    };
    if (t.queued > 0) {
      const lanes = t.flows.map((f) => laneTuples(f, pools, budget));
      snap.queues = [lanes[0]![0], lanes[1]![0], lanes[2]![0]];
      if (lanes.some(([, k]) => k !== 0)) snap.keys = [lanes[0]![1], lanes[1]![1], lanes[2]![1]];
    }
    tenants.push(snap);
  }
  return {
    settings: { ...s.settings, floors: { ...s.settings.floors } },
    governorParams: { ...s.governorParams },
    governor: copyGovernor(s.governor),
    ...(s.pools.size
      ? { pools: [...s.pools].map(([name, g]): [string, GovernorState] => [name, copyGovernor(g)]) }
      : {}),
    seq: s.seq,
    counters: { ...s.counters, admittedByPriority: { ...s.counters.admittedByPriority } },
    intake: s.intake,
    draining: s.draining,
    vtime: [s.lanes[0].vtime, s.lanes[1].vtime, s.lanes[2].vtime],
    credits: [...s.credits],
    fleetRate: { ...s.fleetRate },
    nextOrd: s.nextOrd,
    ...(s.recoverySince !== null ? { recoverySince: s.recoverySince } : {}),
    ...passedOverSnapshot(s.passedOver),
    tenants,
    leases: s.leases.all().map((l): LeaseTuple => {
      const tuple: LeaseTuple = [
        l.runId,
        l.tenant.ord,
        l.lane,
        l.attempt,
        l.seq,
        l.admittedAt,
        l.expiresAt,
        l.reserved,
        l.used,
        l.charged,
        l.perCall ? 1 : 0,
      ];
      const pool = pools.get(l.pool);
      if (pool !== undefined) tuple.push(pool);
      return tuple;
    }),
    log: s.log.snapshot(),
    ended: s.ended.snapshot(),
    ...(s.chargeKeys.size ? { chargeKeys: s.chargeKeys.snapshot() } : {}),
    ...(s.fencedOwners.size ? { fencedOwners: s.fencedOwners.snapshot() } : {}),
  };
}

function restoreGovernor(snap: PlainSnapshot, saved: GovernorState): GovernorState {
  const fresh = newGovernor({ ...DEFAULT_GOVERNOR, ...snap.governorParams }, saved.tokensAt);
  const g = { ...fresh, ...saved };
  return {
    ...g,
    // A snapshot from before throttle cuts were told apart: its last decrease stands for its last cut.
    lastCutAt: saved.lastCutAt !== undefined ? saved.lastCutAt : saved.lastDecreaseAt,
    served: { ...g.served },
    recent: { ...g.recent },
    admitted: { ...g.admitted },
    settledReserved: { ...(g.settledReserved ?? fresh.settledReserved!) },
    settledSpent: { ...(g.settledSpent ?? fresh.settledSpent!) },
    providerRequestsPerMinute: g.providerRequestsPerMinute ?? null,
    servedCalls: { ...(g.servedCalls ?? fresh.servedCalls!) },
    recentCalls: { ...(g.recentCalls ?? fresh.recentCalls!) },
    // A snapshot from before the breaker: closed (absent).
    ...(g.breaker ? { breaker: { ...g.breaker } } : {}),
    // A snapshot from before the latency signal: no latency seen yet (absent).
    ...(g.latency ? { latency: { ...g.latency } } : {}),
  };
}

function cloneSettings(x: TenantSettings): TenantSettings {
  return { ...x, budget: { ...x.budget }, ...(x.keyWeights ? { keyWeights: { ...x.keyWeights } } : {}) };
}

function fromPlain(snap: PlainSnapshot, endedMemory?: number): CoreState {
  const lanes = [new LaneQueue(0), new LaneQueue(1), new LaneQueue(2)] as CoreState['lanes'];
  lanes.forEach((q, i) => (q.vtime = snap.vtime[i] as number));
  const zero = zeroCounters();
  const s: CoreState = {
    settings: { ...snap.settings, floors: { ...snap.settings.floors } },
    // Snapshots from before a governor field existed take its default.
    governorParams: { ...DEFAULT_GOVERNOR, ...snap.governorParams },
    governor: restoreGovernor(snap, snap.governor),
    pools: new Map((snap.pools ?? []).map(([name, g]) => [name, restoreGovernor(snap, g)])),
    tenants: new Map(),
    nextOrd: snap.nextOrd,
    lanes,
    credits: [...snap.credits],
    queued: new Map(),
    queuedCost: 0,
    leases: new LeaseTable(),
    budgetParked: new Set(),
    budgetWakeAt: Infinity,
    seq: snap.seq,
    // Snapshots from before a counter existed start it at 0.
    counters: {
      ...zero,
      ...snap.counters,
      admittedByPriority: { ...zero.admittedByPriority, ...snap.counters.admittedByPriority },
    },
    intake: snap.intake,
    draining: snap.draining,
    fleetRate: { ...snap.fleetRate },
    log: LedgerLog.restore(snap.log),
    ended: EndedRuns.restore(snap.ended, endedMemory),
    chargeKeys: ChargeKeys.restore(snap.chargeKeys),
    fencedOwners: FencedOwners.restore(snap.fencedOwners),
    lingers: new Map(),
    recoverySince: snap.recoverySince ?? null,
    passedOver: new Map([
      ...(snap.passedOver
        ? [[DEFAULT_POOL, { runId: snap.passedOver[0], since: snap.passedOver[1] }] as const]
        : []),
      ...(snap.passedOverPools ?? []).map(([pool, runId, since]) => [pool, { runId, since }] as const),
    ]),
    overBudget: new Set(),
  };
  const poolNames = [DEFAULT_POOL, ...(snap.pools ?? []).map(([name]) => name)];
  const poolAt = (i: number | undefined) => poolNames[i ?? 0] ?? DEFAULT_POOL;
  const byOrd = new Map<number, TenantState>();
  const lingers: [TenantState, number, number][] = [];
  for (const ts of snap.tenants) {
    const t = createTenant(ts.id, ts.ord, cloneSettings(ts.settings), 0);
    const [periodStart, periodEnd, reserved, spent, linger, lingerUntil] = ts.ledger;
    // The ledger's `reserved` includes the linger already.
    if (linger !== undefined && lingerUntil !== undefined) lingers.push([t, linger, lingerUntil]);
    // A spend that is not a finite number is unknown and large: it exhausts the budget, never resets it.
    Object.assign(t.ledger, {
      periodStart,
      periodEnd,
      reserved: restoredFigure(reserved, 0),
      spent: restoredFigure(spent, t.ledger.budget ?? Number.MAX_VALUE),
    });
    t.rate = { ...ts.rate };
    t.seenAt = ts.seen ?? ts.rate.at;
    t.flows.forEach((f, lane) => {
      f.tag = ts.tags[lane] as number;
      const keys = ts.keys?.[lane];
      if (!keys) return;
      const [kv, names, tags] = keys;
      f.keys.kv = kv;
      names.forEach((name, i) => f.keys.restoreSlot(name, tags[i] ?? kv));
    });
    ts.queues?.forEach(([ids, costs, attempts, pools, slots], lane) => {
      ids.forEach((runId, i) => {
        const slot = slots?.[i] ?? '';
        const u: QueuedUnit = {
          runId,
          tenant: t,
          lane: lane as Lane,
          cost: costs[i] ?? 1,
          attempt: attempts[i] ?? 0,
          live: true,
          pool: poolAt(pools?.[i]),
          key: slot,
          slot,
        };
        pushUnit(t.flows[lane as Lane], u);
        s.queued.set(runId, u);
        s.queuedCost += u.cost;
        t.queued++;
        t.queuedCost += u.cost;
        lanes[lane as Lane].units++;
      });
    });
    if (s.recoverySince !== null) t.held = true;
    s.tenants.set(t.id, t);
    byOrd.set(t.ord, t);
  }
  for (const tuple of snap.leases) {
    const [runId, ord, lane, attempt, seq, admittedAt, expiresAt, reserved, used] = tuple;
    const [charged = 0, perCall = 0, pool] = [tuple[9], tuple[10], tuple[11]];
    const tenant = byOrd.get(ord);
    if (!tenant) continue;
    tenant.inFlight++;
    s.leases.add({
      runId,
      tenant,
      lane,
      attempt,
      seq,
      admittedAt,
      expiresAt,
      reserved,
      used,
      charged,
      perCall: perCall === 1,
      hi: -1,
      pool: poolAt(pool),
    });
  }
  restoreLingers(s, lingers);
  for (const t of s.tenants.values()) refreshTenant(s, t);
  s.budgetWakeAt = earliestBudgetRoll(s);
  return s;
}

/** The default pool's pass-over record as it always was (`passedOver`), named pools' beside it. */
function passedOverSnapshot(
  m: CoreState['passedOver'],
): Pick<PlainSnapshot, 'passedOver' | 'passedOverPools'> {
  const own = m.get(DEFAULT_POOL);
  const named = [...m].filter(([pool]) => pool !== DEFAULT_POOL);
  return {
    ...(own ? { passedOver: [own.runId, own.since] as [string, number] } : {}),
    ...(named.length > 0
      ? { passedOverPools: named.map(([pool, r]): [string, string, number] => [pool, r.runId, r.since]) }
      : {}),
  };
}
