import { jain } from './stats';

export interface WindowFairness {
  startS: number;
  /** Per lane (interactive, standard, batch): tenants backlogged all window long, and their Jain index. */
  lanes: { tenants: number; jain: number }[];
}

/**
 * Jain's index of weight-normalised admitted tokens, per lane and per window, among
 * the tenants that were backlogged in that lane for the whole window and never hit
 * their own in-flight cap (a capped tenant is limited by itself, not by fairness).
 */
export class FairnessWindows {
  readonly windows: WindowFairness[] = [];
  private readonly queued: Int32Array;
  private readonly tokens: Float64Array;
  private readonly eligible: Uint8Array;
  private readonly capped: Uint8Array;
  private windowStart = 0;

  constructor(
    private readonly weights: Float64Array,
    private readonly windowMs: number,
  ) {
    const n = weights.length;
    this.queued = new Int32Array(n * 3);
    this.tokens = new Float64Array(n * 3);
    this.eligible = new Uint8Array(n * 3);
    this.capped = new Uint8Array(n);
  }

  onQueued(tenant: number, lane: number): void {
    this.queued[tenant * 3 + lane]!++;
  }

  onAdmitted(tenant: number, lane: number, cost: number, atCap: boolean): void {
    const k = tenant * 3 + lane;
    this.tokens[k]! += cost;
    if (--this.queued[k]! === 0) this.eligible[k] = 0;
    if (atCap) this.capped[tenant] = 1;
  }

  /** Closes the window when `now` passed its end and opens the next. */
  roll(now: number): void {
    if (now < this.windowStart + this.windowMs) return;
    const lanes = [0, 1, 2].map((lane) => {
      const xs: number[] = [];
      for (let t = 0; t < this.weights.length; t++) {
        const k = t * 3 + lane;
        if (this.eligible[k] && !this.capped[t]) xs.push((this.tokens[k] as number) / (this.weights[t] as number));
      }
      return { tenants: xs.length, jain: jain(xs) };
    });
    this.windows.push({ startS: this.windowStart / 1000, lanes });
    this.windowStart = now;
    this.tokens.fill(0);
    this.capped.fill(0);
    for (let k = 0; k < this.eligible.length; k++) this.eligible[k] = this.queued[k]! > 0 ? 1 : 0;
  }

  /** Tenant-weighted mean and the minimum of the per-window indices, per lane (windows with ≥ 2 tenants). */
  summary(): { lane: number; windows: number; meanTenants: number; meanJain: number; minJain: number }[] {
    return [0, 1, 2].map((lane) => {
      const ws = this.windows.map((w) => w.lanes[lane]!).filter((l) => l.tenants >= 2);
      const n = ws.reduce((a, w) => a + w.tenants, 0);
      return {
        lane,
        windows: ws.length,
        meanTenants: ws.length ? n / ws.length : 0,
        meanJain: n ? ws.reduce((a, w) => a + w.jain * w.tenants, 0) / n : NaN,
        minJain: ws.length ? Math.min(...ws.map((w) => w.jain)) : NaN,
      };
    });
  }
}
