import type { LaneFairness } from './fairness';
import type { FleetRun } from './sim-fleet';
import type { SimOptions } from './sim-options';

/** The sharded mode's result: the fleet under its governor beside the oracle on the same trace. */
export interface FleetSimResult {
  options: SimOptions;
  oracle: FleetRun;
  fleet: FleetRun;
  checks: {
    /** Fleet-wide Jain's index (tenant-weighted mean over lanes' windows) ≥ 0.99. */
    jain: { fleet: number; oracle: number; pass: boolean };
    /** The largest window spread of weight-normalised tokens over its VTC bound: ≤ 1 passes. */
    vtc: { fleet: number; oracle: number; pass: boolean };
    /** Floors plus live grants never above the quota, in any dimension. */
    quota: { maxTotalOverQuota: number; pass: boolean };
  };
}

/** Mean Jain over lanes, weighted by the tenants each lane's windows held. */
export function fleetJain(f: readonly LaneFairness[]): number {
  const n = f.reduce((a, l) => a + (l.windows ? l.meanTenants * l.windows : 0), 0);
  return f.reduce((a, l) => a + (l.windows ? l.meanJain * l.meanTenants * l.windows : 0), 0) / n;
}

export function vtcRatio(f: readonly LaneFairness[]): number {
  return Math.max(0, ...f.map((l) => l.vtc?.maxSpreadOverBound ?? 0));
}

const int = (x: number) => Math.round(x).toLocaleString('en-US');
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
const LANES = ['interactive', 'standard', 'batch'];

function printRun(name: string, r: FleetRun): void {
  console.log(
    `${name}: ${r.shards} shard(s) · virtual ${int(r.virtualSeconds)} s · wall ${r.wallSeconds.toFixed(1)} s · in the cores ${r.coreSeconds.toFixed(1)} s`,
  );
  console.log(
    `  submitted ${int(r.submitted)} · admitted ${int(r.admitted)} · completed ${int(r.completed)} · shed ${int(r.shed)} · peak queued ${int(r.peakQueued)} (one shard ${int(r.peakQueuedPerShard)}) · peak in flight ${int(r.peakInFlight)}`,
  );
  for (const f of r.fairness) {
    const lane = LANES[f.lane]!.padEnd(11);
    console.log(
      `  ${lane} Jain mean ${f3(f.meanJain)} · min ${f3(f.minJain)} · ${f.windows} windows, ${int(f.meanTenants)} tenants · VTC spread ${int(f.vtc?.maxSpread ?? 0)} (${f3(f.vtc?.maxSpreadOverBound ?? NaN)} of bound; ${f.vtc?.rateBoundWindows ?? 0} rate-bound windows left out)`,
    );
  }
  if (r.governor) {
    const g = r.governor.maxTotalOverQuota;
    console.log(
      `  governor: ${int(r.governor.renewals)} renewals · max total/quota slots ${f3(g.slots)}, rpm ${f3(g.requestsPerMinute)}, tpm ${f3(g.tokensPerMinute)} · ${r.governor.lapsedShardSteps} shard-renewals at the floor`,
    );
  }
}

export function printFleetReport(r: FleetSimResult): void {
  const o = r.options;
  console.log(
    `Fairway sharded simulation: ${int(o.tenants)} tenants (${o.whales} whales, ${int(o.whaleKeys)} keys each, ${(o.whaleShare * 100).toFixed(0)}% of units), ${int(o.units)} units, seed ${o.seed}`,
  );
  printRun('oracle', r.oracle);
  printRun('fleet ', r.fleet);
  const c = r.checks;
  console.log(
    `checks: Jain ${f3(c.jain.fleet)} (oracle ${f3(c.jain.oracle)}) ${c.jain.pass ? 'pass' : 'FAIL'} · VTC ${f3(c.vtc.fleet)} of bound (oracle ${f3(c.vtc.oracle)}) ${c.vtc.pass ? 'pass' : 'FAIL'} · governor total ${f3(c.quota.maxTotalOverQuota)} of quota ${c.quota.pass ? 'pass' : 'FAIL'}`,
  );
}
