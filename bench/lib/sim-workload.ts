import type { Priority } from '../../src/scheduler';
import { exponential, mulberry32, normal, zipf } from './prng';
import type { SimOptions } from './sim-options';

/** Tenant mix: weights 1/2/4/8, a few tenants with a tight in-flight cap. */
export interface SimTenants {
  weights: Float64Array;
  maxInFlight: Int32Array;
}

/** The synthetic units, generated lazily in arrival order (struct-of-arrays, indexed by unit number). */
export interface SimUnits {
  tenant: Int32Array;
  lane: Uint8Array;
  cost: Int32Array;
  serviceMs: Float64Array;
  arrivalMs: Float64Array;
  /** True when the unit's worker vanishes on its first attempt (its lease has to expire). */
  vanishes: Uint8Array;
}

export const LANE_NAMES: readonly Priority[] = ['interactive', 'standard', 'batch'];

export function makeTenants(o: SimOptions): SimTenants {
  const rnd = mulberry32(o.seed ^ 0x7e7a);
  const weights = new Float64Array(o.tenants);
  const maxInFlight = new Int32Array(o.tenants);
  const choices = [1, 1, 1, 1, 2, 2, 4, 8];
  for (let t = 0; t < o.tenants; t++) {
    weights[t] = choices[Math.floor(rnd() * choices.length)] as number;
    maxInFlight[t] = rnd() < 0.02 ? 3 : 50;
  }
  return { weights, maxInFlight };
}

/*
 * Costs are log-normal around 2,000 tokens (clamped to 200–20,000); service time grows
 * with cost plus noise; popularity of tenants is Zipf(0.8), so a few tenants flood
 * while most submit little; lanes are 15% interactive, 60% standard, 25% batch.
 */
export function makeUnits(o: SimOptions): SimUnits {
  const rnd = mulberry32(o.seed);
  const pickTenant = zipf(rnd, o.tenants, 0.8);
  const n = o.units;
  const u: SimUnits = {
    tenant: new Int32Array(n),
    lane: new Uint8Array(n),
    cost: new Int32Array(n),
    serviceMs: new Float64Array(n),
    arrivalMs: new Float64Array(n),
    vanishes: new Uint8Array(n),
  };
  const meanGapMs = (o.arrivalSeconds * 1000) / n;
  let at = 0;
  for (let i = 0; i < n; i++) {
    at += exponential(rnd, meanGapMs);
    u.arrivalMs[i] = at;
    u.tenant[i] = pickTenant();
    const r = rnd();
    u.lane[i] = r < 0.15 ? 0 : r < 0.75 ? 1 : 2;
    const cost = Math.round(Math.min(20_000, Math.max(200, Math.exp(Math.log(2000) + 0.8 * normal(rnd)))));
    u.cost[i] = cost;
    u.serviceMs[i] = (1000 + cost * 0.8) * (0.5 + rnd());
    u.vanishes[i] = rnd() < o.vanish ? 1 : 0;
  }
  return u;
}
