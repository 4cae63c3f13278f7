import { mulberry32, zipf } from './prng';
import type { SimOptions } from './sim-options';
import type { SimTenants, SimUnits } from './sim-workload';

/** The skewed trace's fairness keys: a unit's end user inside its whale, or -1 (no key). */
export interface FleetTrace {
  keyOf: Int32Array;
  whales: number;
}

/*
 * Reshapes the sim's units (in place) into the sharded mode's trace: `whaleShare` of the units go
 * to the first `whales` tenants, each unit under one of `whaleKeys` end users (Zipf(0.6), so a few
 * users flood); the rest are Zipf(0.8) over the many small tenants. A whale's own in-flight cap is
 * the fleet's, so only the scheduler limits it. Arrival times, lanes and costs are the sim's
 * (`--one-lane`: every unit standard).
 */
export function skewTrace(o: SimOptions, tenants: SimTenants, u: SimUnits): FleetTrace {
  const whales = Math.max(0, Math.min(o.whales, o.tenants - 1));
  const rnd = mulberry32(o.seed ^ 0x5a4d);
  const small = zipf(rnd, o.tenants - whales, 0.8);
  const user = zipf(rnd, Math.max(1, o.whaleKeys), 0.6);
  const keyOf = new Int32Array(u.tenant.length).fill(-1);
  for (let i = 0; i < u.tenant.length; i++) {
    if (whales > 0 && rnd() < o.whaleShare) {
      u.tenant[i] = Math.floor(rnd() * whales);
      keyOf[i] = user();
    } else {
      u.tenant[i] = whales + small();
    }
  }
  if (o.oneLane) u.lane.fill(1);
  for (let w = 0; w < whales; w++) tenants.maxInFlight[w] = o.concurrency;
  return { keyOf, whales };
}
