import type { GovernorStatus, SchedulerStatus } from '../../src/scheduler';
import type { LaneFairness } from './fairness';
import type { SimOptions } from './sim-options';
import type { SteadyState } from './steady-state';

export interface WaitSpread {
  tenants: number;
  p50: number;
  p99: number;
  max: number;
}

export interface SimResult {
  options: SimOptions;
  virtualSeconds: number;
  wallSeconds: number;
  /** Wall time spent inside scheduler calls only. */
  coreSeconds: number;
  admissions: number;
  /** Admissions per second of wall time across all core calls (submit, admit, release, expire, observe). */
  decisionsPerSecond: number;
  /** Admissions per second of wall time inside admit() alone. */
  admitOnlyDecisionsPerSecond: number;
  /** admit() throughput while 90,000–110,000 units were queued. */
  at100k: { decisions: number; decisionsPerSecond: number };
  /** Single-decision timing with the backlog held at a fixed depth (null when skipped). */
  steady: SteadyState | null;
  peakQueued: number;
  fairness: LaneFairness[];
  /** Each tenant's worst wait from submission to admission, spread over tenants. */
  worstWaitSeconds: WaitSpread;
  lanes: {
    lane: string;
    admissionShare: number;
    tokenShare: number;
    shareWhileAllBacklogged: number;
    worstWaitSeconds: WaitSpread;
  }[];
  counters: SchedulerStatus['counters'];
  governor: GovernorStatus;
}

const int = (x: number) => Math.round(x).toLocaleString('en-US');
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
const LANES = ['interactive', 'standard', 'batch'];

export function printSimReport(r: SimResult): void {
  const o = r.options;
  console.log(
    `Fairway scheduler simulation: ${int(o.tenants)} tenants, ${int(o.units)} units, seed ${o.seed}, concurrency ${o.concurrency}`,
  );
  console.log(
    `virtual time ${int(r.virtualSeconds)} s · wall ${r.wallSeconds.toFixed(1)} s · inside the core ${r.coreSeconds.toFixed(2)} s`,
  );
  console.log(`decisions: ${int(r.admissions)} admissions`);
  console.log(
    `  ${int(r.decisionsPerSecond)} decisions/s over all core calls · ${int(r.admitOnlyDecisionsPerSecond)}/s inside admit()`,
  );
  console.log(
    `  while 90–110k were queued in the run: ${int(r.at100k.decisionsPerSecond)} decisions/s (${int(r.at100k.decisions)} decisions)`,
  );
  if (r.steady) {
    const s = r.steady;
    console.log(
      `  steady state at ${int(s.queued)} queued: ${int(s.admitPerSecond)} decisions/s inside admit() · ${int(s.cyclePerSecond)} full cycles/s (release+submit+admit, ${int(s.decisions)} decisions)`,
    );
  }
  console.log(`peak queued: ${int(r.peakQueued)}`);
  console.log(
    `fairness, Jain's index of weight-normalised tokens among backlogged tenants (windows of ${o.windowUnits} units per tenant):`,
  );
  for (const f of r.fairness) {
    const name = LANES[f.lane]!.padEnd(11);
    if (f.windows === 0) console.log(`  ${name} no tenant stayed backlogged long enough to measure`);
    else
      console.log(
        `  ${name} mean ${f3(f.meanJain)} · min ${f3(f.minJain)} · ${f.windows} windows, ${int(f.meanTenants)} tenants on average`,
      );
  }
  const waits = (w: WaitSpread) =>
    `p50 ${w.p50.toFixed(1)} s · p99 ${w.p99.toFixed(1)} s · max ${w.max.toFixed(1)} s (${int(w.tenants)} tenants)`;
  console.log(`worst wait per tenant, submission to admission: ${waits(r.worstWaitSeconds)}`);
  for (const l of r.lanes) console.log(`  ${l.lane.padEnd(11)} ${waits(l.worstWaitSeconds)}`);
  console.log('lanes (admissions · tokens · admissions while all three lanes were backlogged):');
  for (const l of r.lanes) {
    console.log(
      `  ${l.lane.padEnd(11)} ${pct(l.admissionShare)} · ${pct(l.tokenShare)} · ${pct(l.shareWhileAllBacklogged)}`,
    );
  }
  const g = r.governor;
  console.log(
    `governor: ${g.decreases} decreases, ${g.increases} increases, now ${int(g.tokensPerMinute)} tokens/min, concurrency ${g.concurrencyLimit}`,
  );
  const c = r.counters;
  console.log(
    `counters: submitted ${int(c.submitted)} · admitted ${int(c.admitted)} · completed ${int(c.completed)} · expired ${int(c.expired)} · shed ${int(c.shed)}`,
  );
}
