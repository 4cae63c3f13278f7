import { jain } from './stats';

export interface LaneFairness {
  lane: number;
  windows: number;
  meanTenants: number;
  /** Tenant-weighted mean of the per-window indices. */
  meanJain: number;
  minJain: number;
  /**
   * With a VTC bound configured: the largest spread of weight-normalised tokens in a window, its
   * ratio to the bound, and the windows left out because the server was rate-bound in them.
   */
  vtc?: { maxSpread: number; maxSpreadOverBound: number; rateBoundWindows: number };
}

/**
 * The VTC measure's bound for a window (Sheng et al., OSDI 2024): tenants i and j backlogged
 * throughout differ in weight-normalised service by at most maxCost/w_i + maxCost/w_j, plus, across
 * shards, `lagTokens` (what the fleet admits in one grant lease) over the window's backlogged weight,
 * once on each side.
 */
export interface VtcBound {
  maxCost: number;
  lagTokens: number;
}

class LaneWindow {
  readonly tokens: Float64Array;
  readonly eligible: Uint8Array;
  admitted = 0;
  target = 0;
  readonly results: { tenants: number; jain: number }[] = [];
  maxSpread = 0;
  maxRatio = 0;
  rateBound = false;
  rateBoundWindows = 0;

  constructor(n: number) {
    this.tokens = new Float64Array(n);
    this.eligible = new Uint8Array(n);
  }
}

/**
 * Jain's index of weight-normalised admitted tokens among the tenants backlogged in
 * a lane, per window. A window opens with the tenants backlogged in the lane and
 * closes after the lane admitted `unitsPerTenant` units per such tenant, so most
 * window holds enough decisions for the fair-queuing granularity (one unit's cost
 * per tenant) not to dominate; time windows would measure the workload's lumpiness
 * in a lane that gets 5% of admissions. Tenants that drain their backlog or hit
 * their own in-flight cap during the window leave it: they are limited by
 * themselves, not by the scheduler.
 */
export class FairnessWindows {
  private readonly queued: Int32Array;
  private readonly lanes: LaneWindow[];

  constructor(
    private readonly weights: Float64Array,
    private readonly unitsPerTenant: number,
    /** Whether a tenant is at its own in-flight cap right now. */
    private readonly atCap: (tenant: number) => boolean,
    private readonly vtc?: VtcBound,
  ) {
    this.queued = new Int32Array(weights.length * 3);
    this.lanes = [0, 1, 2].map(() => new LaneWindow(weights.length));
  }

  onQueued(tenant: number, lane: number): void {
    this.queued[tenant * 3 + lane]!++;
  }

  /**
   * The server is rate-bound now (throttled, or within a minute of it, so its token budget is
   * tight): it passes over a flow whose head unit costs more than the tokens left, so flows are not
   * served in tag order and the bound does not hold. The windows open now are left out of the VTC
   * spread (not of Jain).
   */
  rateBound(): void {
    for (const w of this.lanes) w.rateBound = true;
  }

  onAdmitted(tenant: number, lane: number, cost: number, atCap: boolean): void {
    const w = this.lanes[lane]!;
    w.tokens[tenant]! += cost;
    if (--this.queued[tenant * 3 + lane]! === 0) w.eligible[tenant] = 0;
    // The cap is per tenant across lanes: reaching it parks the tenant's other lanes too.
    if (atCap) for (const l of this.lanes) l.eligible[tenant] = 0;
    if (++w.admitted >= w.target) this.roll(lane);
  }

  private roll(lane: number): void {
    const w = this.lanes[lane]!;
    const xs: number[] = [];
    for (let t = 0; t < this.weights.length; t++) {
      if (w.eligible[t]) xs.push((w.tokens[t] as number) / (this.weights[t] as number));
    }
    if (w.target > 0 && xs.length >= 2) {
      w.results.push({ tenants: xs.length, jain: jain(xs) });
      if (this.vtc && w.rateBound) w.rateBoundWindows++;
      else if (this.vtc) this.spread(w);
    }
    w.rateBound = false;
    let n = 0;
    for (let t = 0; t < this.weights.length; t++) {
      const backlogged = this.queued[t * 3 + lane]! > 0;
      w.eligible[t] = backlogged && !this.atCap(t) ? 1 : 0;
      if (backlogged) n++;
    }
    w.tokens.fill(0);
    w.admitted = 0;
    w.target = Math.max(100, n * this.unitsPerTenant);
  }

  private spread(w: LaneWindow): void {
    const v = this.vtc!;
    let hi = -1;
    let lo = -1;
    let weight = 0;
    for (let t = 0; t < this.weights.length; t++) {
      if (!w.eligible[t]) continue;
      const x = w.tokens[t]! / this.weights[t]!;
      weight += this.weights[t]!;
      if (hi < 0 || x > w.tokens[hi]! / this.weights[hi]!) hi = t;
      if (lo < 0 || x < w.tokens[lo]! / this.weights[lo]!) lo = t;
    }
    const spread = w.tokens[hi]! / this.weights[hi]! - w.tokens[lo]! / this.weights[lo]!;
    const bound = v.maxCost / this.weights[hi]! + v.maxCost / this.weights[lo]! + (2 * v.lagTokens) / weight;
    w.maxSpread = Math.max(w.maxSpread, spread);
    w.maxRatio = Math.max(w.maxRatio, spread / bound);
  }

  summary(): LaneFairness[] {
    return this.lanes.map((w, lane) => {
      const n = w.results.reduce((a, r) => a + r.tenants, 0);
      return {
        lane,
        windows: w.results.length,
        meanTenants: w.results.length ? n / w.results.length : 0,
        meanJain: n ? w.results.reduce((a, r) => a + r.jain * r.tenants, 0) / n : NaN,
        minJain: w.results.length ? Math.min(...w.results.map((r) => r.jain)) : NaN,
        ...(this.vtc
          ? {
              vtc: {
                maxSpread: w.maxSpread,
                maxSpreadOverBound: w.maxRatio,
                rateBoundWindows: w.rateBoundWindows,
              },
            }
          : {}),
      };
    });
  }
}
