import { demandCurve } from '../../src/scheduler';
import type { SimTenants } from './sim-workload';

/** One shard's demand for the governor: a curve over all lanes, or one per lane. */
export interface ShardCurves {
  curve?: number[];
  laneCurves?: number[][];
}

/**
 * Units queued and running per tenant and lane in the sharded sim, from which each shard states its
 * demand: a tenant counts for the slots it can use (running plus queued, within its in-flight cap),
 * over all its lanes or lane by lane.
 */
export class LaneLoad {
  private readonly queued: Int32Array;
  private readonly running: Int32Array;

  constructor(
    private readonly tenants: SimTenants,
    private readonly home: Int32Array,
  ) {
    this.queued = new Int32Array(home.length * 3);
    this.running = new Int32Array(home.length * 3);
  }

  queue(tenant: number, lane: number, by: number): void {
    this.queued[tenant * 3 + lane]! += by;
  }

  run(tenant: number, lane: number, by: number): void {
    this.running[tenant * 3 + lane]! += by;
  }

  curves(shards: number, byLane: boolean): ShardCurves[] {
    const lanes = byLane ? 3 : 1;
    const mine = Array.from({ length: shards * lanes }, (): { weight: number; slots: number }[] => []);
    for (let t = 0; t < this.home.length; t++) {
      const cap = this.tenants.maxInFlight[t]!;
      const weight = this.tenants.weights[t]!;
      const load = [0, 1, 2].map((l) => this.queued[t * 3 + l]! + this.running[t * 3 + l]!);
      const per = byLane ? load : [load[0]! + load[1]! + load[2]!];
      per.forEach((n, l) => {
        if (n > 0) mine[this.home[t]! * lanes + l]!.push({ weight, slots: Math.min(cap, n) });
      });
    }
    return Array.from({ length: shards }, (_, s) => {
      const cs = mine.slice(s * lanes, (s + 1) * lanes).map((ts) => demandCurve(ts));
      return byLane ? { laneCurves: cs } : { curve: cs[0]! };
    });
  }
}
