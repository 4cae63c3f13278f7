import { performance } from 'node:perf_hooks';
import { DEFAULT_GOVERNOR, allowance, fleetTotal, renewGrants } from '../../src/scheduler';
import type { Admission, Grant, Release, UnitSubmission } from '../../src/scheduler';
import { FairnessWindows } from './fairness';
import type { LaneFairness } from './fairness';
import { LaneLoad } from './sim-fleet-demand';
import { LANE_FLOORS, T0, buildFleet } from './sim-fleet-setup';
import type { FleetTrace } from './sim-fleet-trace';
import type { SimOptions } from './sim-options';
import { LANE_NAMES } from './sim-workload';
import type { SimTenants, SimUnits } from './sim-workload';

export interface FleetRun {
  shards: number;
  virtualSeconds: number;
  wallSeconds: number;
  coreSeconds: number;
  submitted: number;
  admitted: number;
  completed: number;
  shed: number;
  peakQueued: number;
  /** Largest units queued on one shard at any step. */
  peakQueuedPerShard: number;
  peakInFlight: number;
  fairness: LaneFairness[];
  governor: {
    renewals: number;
    /** Largest fleet total (floors plus live grants) over the quota, per dimension: ≤ 1 always. */
    maxTotalOverQuota: { slots: number; requestsPerMinute: number; tokensPerMinute: number };
    lapsedShardSteps: number;
  } | null;
}

/**
 * Drives `shards` policy cores on one trace in virtual time, each owning the tenants the shard map
 * gives it. Governed, the fleet governor renews every `grantMs`: each core's concurrency is its
 * allowance's slots and its model plane states the allowance's tokens a minute as its limit; every
 * core hears 429s (the provider's real quota, shared) for its own calls and cuts at once. Ungoverned
 * with one shard, it is the single-scheduler oracle: the whole quota, no grants.
 */
export function simulateFleet(
  o: SimOptions,
  tenants: SimTenants,
  u: SimUnits,
  trace: FleetTrace,
  shards: number,
  governed: boolean,
): FleetRun {
  const { ids, names, home, quota, gcfg, cores } = buildFleet(o, tenants, trace, shards, governed);
  const inFlightOf = new Int32Array(o.tenants);
  const queuedOf = new Int32Array(o.tenants);
  const load = new LaneLoad(tenants, home);
  const maxCost = u.cost.reduce((a, c) => Math.max(a, c), 0);
  const lagTokens = governed ? (o.tpm * gcfg.leaseMs) / 60_000 : 0;
  const fairness = new FairnessWindows(
    tenants.weights,
    o.windowUnits,
    (t) => inFlightOf[t]! >= tenants.maxInFlight[t]!,
    { maxCost, lagTokens },
  );
  const backlog = new Float64Array(shards);
  const shardQueued = new Int32Array(shards);
  const shardInFlight = new Int32Array(shards);
  const completions = new Map<number, Admission[]>();
  const retries: UnitSubmission[] = [];
  const window = new Float64Array(60 * (shards + 1));
  // Slots each shard held, sampled each second over the last minute: its tokens per slot-minute.
  const busy = new Float64Array(60 * shards);
  const calls = new Float64Array(shards);
  let grants = new Map<string, Grant>();
  const totals = { slots: 0, requestsPerMinute: 0, tokensPerMinute: 0 };
  let renewals = 0;
  let lapsedShardSteps = 0;
  const run = {
    submitted: 0,
    admitted: 0,
    completed: 0,
    shed: 0,
    peakQueued: 0,
    peakShard: 0,
    peakInFlight: 0,
  };
  let coreMs = 0;
  const time = <T>(f: () => T): T => {
    const t0 = performance.now();
    const r = f();
    coreMs += performance.now() - t0;
    return r;
  };
  const unit = (runId: string) => Number(runId.slice(1));
  let queued = 0;
  let inFlight = 0;
  let next = 0;
  const stepsPerSecond = Math.max(1, Math.round(1000 / o.stepMs));
  const grantSteps = Math.max(1, Math.round(o.grantMs / o.stepMs));
  const lapseFrom = 0.6 * o.arrivalSeconds * 1000;
  const lapseTo = 0.7 * o.arrivalSeconds * 1000;
  const wallStart = performance.now();

  let throttledAt = -Infinity;
  let step = 0;
  for (; next < o.units || queued > 0 || inFlight > 0; step++) {
    const t = step * o.stepMs;
    const now = T0 + t;
    const batches: UnitSubmission[][] = ids.map(() => []);
    for (const r of retries.splice(0)) batches[home[u.tenant[unit(r.runId)]!]!]!.push(r);
    for (; next < o.units && u.arrivalMs[next]! <= t; next++) {
      const k = trace.keyOf[next]!;
      batches[home[u.tenant[next]!]!]!.push({
        runId: `u${next}`,
        tenant: names[u.tenant[next]!]!,
        priority: LANE_NAMES[u.lane[next]!]!,
        cost: u.cost[next]!,
        ...(k >= 0 ? { fairnessKey: `user-${k}` } : {}),
      });
    }
    batches.forEach((batch, s) => {
      if (batch.length === 0) return;
      for (const r of time(() => cores[s]!.submit(batch, now))) {
        if (!r.accepted) run.shed++;
        if (!r.accepted || r.duplicate) continue;
        const i = unit(r.runId);
        const tenant = u.tenant[i]!;
        run.submitted++;
        if (queuedOf[tenant]!++ === 0) backlog[s]! += tenants.weights[tenant]!;
        queued++;
        shardQueued[s]!++;
        fairness.onQueued(tenant, u.lane[i]!);
        load.queue(tenant, u.lane[i]!, 1);
      }
      run.peakShard = Math.max(run.peakShard, shardQueued[s]!);
    });
    run.peakQueued = Math.max(run.peakQueued, queued);

    const due = completions.get(step);
    if (due) {
      completions.delete(step);
      const byShard: Release[][] = ids.map(() => []);
      for (const a of due) {
        const i = unit(a.runId);
        const s = home[u.tenant[i]!]!;
        const used = Math.round(u.cost[i]! * (0.8 + (0.3 * ((i * 2654435761) % 1000)) / 1000));
        const slot = Math.floor(t / 1000) % 60;
        window[slot * (shards + 1)]! += used;
        window[slot * (shards + 1) + 1 + s]! += used;
        calls[s]!++;
        shardInFlight[s]!--;
        inFlightOf[u.tenant[i]!]!--;
        load.run(u.tenant[i]!, u.lane[i]!, -1);
        byShard[s]!.push({ runId: a.runId, attempt: a.attempt, usedTokens: used, outcome: 'completed' });
      }
      inFlight -= due.length;
      run.completed += due.length;
      byShard.forEach((rs, s) => rs.length > 0 && time(() => cores[s]!.release(rs, now)));
    }

    cores.forEach((core, s) => {
      for (const a of time(() => core.expireLeases(now))) {
        const i = unit(a.runId);
        inFlight--;
        shardInFlight[s]!--;
        inFlightOf[u.tenant[i]!]!--;
        load.run(u.tenant[i]!, u.lane[i]!, -1);
        retries.push({
          runId: a.runId,
          tenant: a.tenant,
          priority: a.priority,
          cost: u.cost[i]!,
          attempt: a.attempt + 1,
        });
      }
    });

    if (governed && step % grantSteps === 0) {
      const silent = o.lapse && t >= lapseFrom && t < lapseTo;
      const curves = load.curves(shards, o.laneGrants);
      const perSlot = (s: number) => {
        let tokens = 0;
        let slotSeconds = 0;
        for (let j = 0; j < 60; j++) {
          tokens += window[j * (shards + 1) + 1 + s]!;
          slotSeconds += busy[j * shards + s]!;
        }
        return slotSeconds > 0 ? { tokensPerMinute: (60 * tokens) / slotSeconds } : {};
      };
      const demands = ids.flatMap((shard, s) =>
        silent && s === 0
          ? []
          : [
              {
                shard,
                weight: backlog[s]!,
                slotsInUse: shardInFlight[s]!,
                perSlot: perSlot(s),
                ...curves[s],
              },
            ],
      );
      grants = renewGrants(gcfg, grants, demands, now);
      renewals++;
      const total = fleetTotal(gcfg, grants, now);
      for (const d of ['slots', 'requestsPerMinute', 'tokensPerMinute'] as const)
        totals[d] = Math.max(totals[d], total[d] / quota[d]);
      cores.forEach((core, s) => {
        const a = allowance(gcfg, grants.get(ids[s]!), now);
        if (now >= (grants.get(ids[s]!)?.expiresAt ?? 0)) lapsedShardSteps++;
        // A live grant's lane split becomes the core's lane floors, so its lanes follow the fleet's.
        const lanes = now < (grants.get(ids[s]!)?.expiresAt ?? 0) ? grants.get(ids[s]!)?.lanes : undefined;
        const floors = lanes ? { standard: lanes[1]!, batch: lanes[2]! } : LANE_FLOORS;
        core.patchSettings({ concurrency: a.slots, floors });
      });
    }

    if (step % stepsPerSecond === 0) {
      const second = Math.floor(t / 1000);
      const stormy = o.storm && t >= 0.4 * o.arrivalSeconds * 1000 && t < 0.5 * o.arrivalSeconds * 1000;
      const real = stormy ? o.tpm / 3 : o.tpm;
      const sum = (col: number) => {
        let x = 0;
        for (let j = 0; j < 60; j++) x += window[j * (shards + 1) + col]!;
        return x;
      };
      const used = sum(0);
      const over = used > real;
      if (over) throttledAt = t;
      if (t - throttledAt < 60_000) fairness.rateBound();
      cores.forEach((core, s) => {
        // The grant is the shard's to use in full (the governor's quota is already the fleet's usable
        // share), so it is stated over the core's quotaShare, which the core keeps as a margin.
        const limit = governed
          ? allowance(gcfg, grants.get(ids[s]!), now).tokensPerMinute / DEFAULT_GOVERNOR.quotaShare
          : real;
        const mine = sum(1 + s);
        const c = calls[s]!;
        const obs = {
          at: now,
          calls: c,
          throttled: over && c > 0 ? Math.ceil((c * (used - real)) / used) : 0,
          maxRetryAfterMs: over && c > 0 ? 1000 : 0,
          tokens: mine,
          remainingTokens: Math.max(0, Math.min(limit - mine, real - used)),
          limitTokens: governed ? Math.min(limit, real) : real,
        };
        time(() => core.observe([obs], now));
      });
      calls.fill(0);
      window.fill(0, ((second + 1) % 60) * (shards + 1), ((second + 1) % 60) * (shards + 1) + shards + 1);
      for (let s = 0; s < shards; s++) busy[(second % 60) * shards + s] = shardInFlight[s]!;
    }

    cores.forEach((core, s) => {
      for (const a of time(() => core.admit(now))) {
        const i = unit(a.runId);
        const tenant = u.tenant[i]!;
        queued--;
        shardQueued[s]!--;
        if (--queuedOf[tenant]! === 0) backlog[s]! -= tenants.weights[tenant]!;
        inFlight++;
        shardInFlight[s]!++;
        run.admitted++;
        inFlightOf[tenant]!++;
        load.queue(tenant, u.lane[i]!, -1);
        load.run(tenant, u.lane[i]!, 1);
        fairness.onAdmitted(
          tenant,
          u.lane[i]!,
          u.cost[i]!,
          inFlightOf[tenant]! >= tenants.maxInFlight[tenant]!,
        );
        if (u.vanishes[i] && a.attempt === 0) continue;
        const doneStep = step + Math.max(1, Math.ceil(u.serviceMs[i]! / o.stepMs));
        const list = completions.get(doneStep);
        if (list) list.push(a);
        else completions.set(doneStep, [a]);
      }
    });
    run.peakInFlight = Math.max(run.peakInFlight, inFlight);
  }

  return {
    shards,
    virtualSeconds: (step * o.stepMs) / 1000,
    wallSeconds: (performance.now() - wallStart) / 1000,
    coreSeconds: coreMs / 1000,
    submitted: run.submitted,
    admitted: run.admitted,
    completed: run.completed,
    shed: run.shed,
    peakQueued: run.peakQueued,
    peakQueuedPerShard: run.peakShard,
    peakInFlight: run.peakInFlight,
    fairness: fairness.summary(),
    governor: governed ? { renewals, maxTotalOverQuota: totals, lapsedShardSteps } : null,
  };
}
