import { performance } from 'node:perf_hooks';
import { DEFAULT_GOVERNOR, FleetScheduler, defaultTenantSettings } from '../src/scheduler';
import type { Admission, Release, UnitSubmission } from '../src/scheduler';
import { FairnessWindows } from './lib/fairness';
import { printSimReport } from './lib/sim-report';
import type { SimResult } from './lib/sim-report';
import { DEFAULT_SIM_OPTIONS, parseSimOptions } from './lib/sim-options';
import type { SimOptions } from './lib/sim-options';
import { LANE_NAMES, makeTenants, makeUnits } from './lib/sim-workload';
import { simulateFleet } from './lib/sim-fleet';
import { fleetJain, printFleetReport, vtcRatio } from './lib/sim-fleet-report';
import type { FleetSimResult } from './lib/sim-fleet-report';
import { skewTrace } from './lib/sim-fleet-trace';
import { writeResult } from './lib/results';
import { measureSteadyState } from './lib/steady-state';
import { percentile } from './lib/stats';

const T0 = Date.UTC(2025, 0, 1);

/**
 * Drives the policy core in virtual time: Poisson arrivals of a synthetic workload,
 * service times from a seeded PRNG, a model plane with a tokens-per-minute quota
 * (optionally cut mid-run) that reports throttles to the governor, and workers that
 * occasionally vanish so leases expire and runs retry. Only core calls are timed.
 */
export function simulate(o: SimOptions): SimResult {
  const tenants = makeTenants(o);
  const u = makeUnits(o);
  const names = Array.from({ length: o.tenants }, (_, t) => `tenant-${t}`);
  const core = FleetScheduler.create(
    {
      settings: {
        concurrency: o.concurrency,
        floors: { standard: 0.1, batch: 0.05 },
        leaseTtlSeconds: 60,
        globalMaxQueued: o.units,
      },
      governor: {
        ...DEFAULT_GOVERNOR,
        maxConcurrency: o.concurrency * 2,
        initialTokensPerMinute: o.tpm,
        minTokensPerMinute: o.tpm / 100,
        maxTokensPerMinute: o.tpm * 1.5,
        increaseTokensPerMinute: o.tpm / 100,
      },
    },
    T0,
  );
  for (let t = 0; t < o.tenants; t++) {
    core.upsertTenant(
      names[t]!,
      defaultTenantSettings({
        weight: tenants.weights[t]!,
        maxQueued: o.units,
        maxInFlight: tenants.maxInFlight[t]!,
      }),
      T0,
    );
  }

  const inFlightOf = new Int32Array(o.tenants);
  const fairness = new FairnessWindows(
    tenants.weights,
    o.windowUnits,
    (t) => inFlightOf[t]! >= tenants.maxInFlight[t]!,
  );
  const worstWait = new Float64Array(o.tenants).fill(-1);
  const worstWaitByLane = new Float64Array(o.tenants * 3).fill(-1);
  const laneAdmissions = [0, 0, 0];
  const laneTokens = [0, 0, 0];
  const laneAllBacklogged = [0, 0, 0];
  const laneQueued = [0, 0, 0];
  const completions = new Map<number, Admission[]>();
  const retries: UnitSubmission[] = [];
  const providerTokens = new Float64Array(60);
  const timing = { coreMs: 0, admitMs: 0, at100k: { ms: 0, decisions: 0 } };
  const time = <T>(f: () => T): [T, number] => {
    const t0 = performance.now();
    const r = f();
    const ms = performance.now() - t0;
    timing.coreMs += ms;
    return [r, ms];
  };
  let next = 0;
  let queued = 0;
  let peakQueued = 0;
  let inFlight = 0;
  let calls = 0;
  let callTokens = 0;
  const stepsPerSecond = Math.max(1, Math.round(1000 / o.stepMs));
  const wallStart = performance.now();

  let step = 0;
  for (; next < o.units || queued > 0 || inFlight > 0; step++) {
    const t = step * o.stepMs;
    const now = T0 + t;
    const batch: UnitSubmission[] = retries.splice(0);
    for (; next < o.units && u.arrivalMs[next]! <= t; next++) {
      batch.push({
        runId: `u${next}`,
        tenant: names[u.tenant[next]!]!,
        priority: LANE_NAMES[u.lane[next]!]!,
        cost: u.cost[next]!,
      });
    }
    if (batch.length > 0) {
      const [res] = time(() => core.submit(batch, now));
      res.forEach((r) => {
        if (!r.accepted || r.duplicate) return;
        const i = Number(r.runId.slice(1));
        queued++;
        laneQueued[u.lane[i]!]!++;
        fairness.onQueued(u.tenant[i]!, u.lane[i]!);
      });
      peakQueued = Math.max(peakQueued, queued);
    }

    const due = completions.get(step);
    if (due) {
      completions.delete(step);
      const releases: Release[] = due.map((a) => {
        const i = Number(a.runId.slice(1));
        const used = Math.round(u.cost[i]! * (0.8 + (0.3 * ((i * 2654435761) % 1000)) / 1000));
        providerTokens[Math.floor(t / 1000) % 60]! += used;
        calls++;
        callTokens += used;
        inFlightOf[u.tenant[i]!]!--;
        return { runId: a.runId, attempt: a.attempt, usedTokens: used, outcome: 'completed' };
      });
      inFlight -= releases.length;
      time(() => core.release(releases, now));
    }

    const [expired] = time(() => core.expireLeases(now));
    for (const a of expired) {
      const i = Number(a.runId.slice(1));
      inFlight--;
      inFlightOf[u.tenant[i]!]!--;
      retries.push({
        runId: a.runId,
        tenant: a.tenant,
        priority: a.priority,
        cost: u.cost[i]!,
        attempt: a.attempt + 1,
      });
    }

    if (step % stepsPerSecond === 0) {
      const second = Math.floor(t / 1000);
      const stormy = o.storm && t >= 0.4 * o.arrivalSeconds * 1000 && t < 0.5 * o.arrivalSeconds * 1000;
      const quota = stormy ? o.tpm / 3 : o.tpm;
      const used = providerTokens.reduce((a, b) => a + b, 0);
      const over = used > quota;
      const obs = {
        at: now,
        calls,
        throttled: over ? Math.ceil((calls * (used - quota)) / used) : 0,
        maxRetryAfterMs: over ? 1000 : 0,
        tokens: callTokens,
        remainingTokens: Math.max(0, quota - used),
        limitTokens: quota,
      };
      time(() => core.observe([obs], now));
      calls = 0;
      callTokens = 0;
      providerTokens[(second + 1) % 60] = 0;
    }

    const all3 = laneQueued.every((q) => q > 0);
    const q0 = queued;
    const [adm, ms] = time(() => core.admit(now));
    timing.admitMs += ms;
    if (q0 >= 90_000 && q0 <= 110_000) {
      timing.at100k.ms += ms;
      timing.at100k.decisions += adm.length;
    }
    for (const a of adm) {
      const i = Number(a.runId.slice(1));
      const tenant = u.tenant[i]!;
      const lane = u.lane[i]!;
      if (a.attempt === 0) {
        const wait = t - u.arrivalMs[i]!;
        worstWait[tenant] = Math.max(worstWait[tenant]!, wait);
        worstWaitByLane[tenant * 3 + lane] = Math.max(worstWaitByLane[tenant * 3 + lane]!, wait);
      }
      queued--;
      laneQueued[lane]!--;
      inFlight++;
      inFlightOf[tenant]!++;
      laneAdmissions[lane]!++;
      laneTokens[lane]! += u.cost[i]!;
      if (all3) laneAllBacklogged[lane]!++;
      fairness.onAdmitted(tenant, lane, u.cost[i]!, inFlightOf[tenant]! >= tenants.maxInFlight[tenant]!);
      if (u.vanishes[i] && a.attempt === 0) continue;
      const doneStep = step + Math.max(1, Math.ceil(u.serviceMs[i]! / o.stepMs));
      const list = completions.get(doneStep);
      if (list) list.push(a);
      else completions.set(doneStep, [a]);
    }
  }

  const status = core.status(T0 + step * o.stepMs);
  const wallSeconds = (performance.now() - wallStart) / 1000;
  const steady =
    o.steadyDecisions > 0 ? measureSteadyState(o, tenants, u, o.steadyQueued, o.steadyDecisions) : null;
  const spread = (xs: ArrayLike<number>) => {
    const waits = Array.from(xs)
      .filter((w) => w >= 0)
      .map((w) => w / 1000);
    return {
      tenants: waits.length,
      p50: percentile(waits, 50),
      p99: percentile(waits, 99),
      max: percentile(waits, 100),
    };
  };
  const laneWaits = (l: number) =>
    Float64Array.from({ length: o.tenants }, (_, t) => worstWaitByLane[t * 3 + l]!);
  return {
    options: o,
    virtualSeconds: (step * o.stepMs) / 1000,
    wallSeconds,
    coreSeconds: timing.coreMs / 1000,
    admissions: status.counters.admitted,
    decisionsPerSecond: status.counters.admitted / (timing.coreMs / 1000),
    admitOnlyDecisionsPerSecond: status.counters.admitted / (timing.admitMs / 1000),
    at100k: {
      decisions: timing.at100k.decisions,
      decisionsPerSecond: timing.at100k.decisions / (timing.at100k.ms / 1000),
    },
    steady,
    peakQueued,
    fairness: fairness.summary(),
    worstWaitSeconds: spread(worstWait),
    lanes: LANE_NAMES.map((name, l) => ({
      lane: name,
      admissionShare: laneAdmissions[l]! / status.counters.admitted,
      tokenShare: laneTokens[l]! / laneTokens.reduce((a, b) => a + b, 0),
      shareWhileAllBacklogged:
        laneAllBacklogged[l]! /
        Math.max(
          1,
          laneAllBacklogged.reduce((a, b) => a + b, 0),
        ),
      worstWaitSeconds: spread(laneWaits(l)),
    })),
    counters: status.counters,
    governor: status.governor,
  };
}

/**
 * Sharded mode (issue 48): the skewed trace through `o.shards` cores under the fleet governor, and
 * through one core (the oracle), with the fleet-wide checks of the issue.
 */
export function simulateShards(o: SimOptions): FleetSimResult {
  const tenants = makeTenants(o);
  const u = makeUnits(o);
  const trace = skewTrace(o, tenants, u);
  const oracle = simulateFleet(o, tenants, u, trace, 1, false);
  const fleet = simulateFleet(o, tenants, u, trace, o.shards, true);
  const quota = Math.max(...Object.values(fleet.governor!.maxTotalOverQuota));
  const jain = { fleet: fleetJain(fleet.fairness), oracle: fleetJain(oracle.fairness) };
  const vtc = { fleet: vtcRatio(fleet.fairness), oracle: vtcRatio(oracle.fairness) };
  return {
    options: o,
    oracle,
    fleet,
    checks: {
      jain: { ...jain, pass: jain.fleet >= 0.99 },
      vtc: { ...vtc, pass: vtc.fleet <= 1 },
      quota: { maxTotalOverQuota: quota, pass: quota <= 1 },
    },
  };
}

/** CLI entry (also called by the bench dispatcher): runs, prints, writes JSON to --out. */
export async function runSim(argv: string[]): Promise<void> {
  const o = parseSimOptions(argv);
  if (o.shards > 0) {
    const result = simulateShards(o);
    printFleetReport(result);
    const { out, ...parameters } = o;
    const file = out === DEFAULT_SIM_OPTIONS.out ? undefined : out;
    console.log(`\nwrote ${writeResult('sim-shards', result, { parameters, ...(file ? { file } : {}) })}`);
    return;
  }
  const result = simulate(o);
  printSimReport(result);
  const { out, ...parameters } = o;
  console.log(`\nwrote ${writeResult('sim', result, { parameters, file: out })}`);
  await Promise.resolve();
}

if (require.main === module) {
  runSim(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
