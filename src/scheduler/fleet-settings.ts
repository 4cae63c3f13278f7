import { MAX_CONCURRENCY, MAX_GLOBAL_QUEUED } from './limits';
import { PRIORITIES } from './types';
import type { FleetSettings, Priority } from './types';

/** Changes to the fleet's settings; any subset. */
export interface SettingsPatch {
  concurrency?: number;
  floors?: { standard?: number; batch?: number };
  leaseTtlSeconds?: number;
  globalMaxQueued?: number;
  interactiveReserve?: number;
  /** A lane's bound on the expected wait, in seconds; 0 or null removes it. */
  maxWaitSeconds?: Partial<Record<Priority, number | null>>;
}

/** The longest bound a lane's expected wait may have (a day). */
export const MAX_WAIT_BOUND_SECONDS = 86_400;

const count = (x: number | undefined, def: number) =>
  x !== undefined && Number.isFinite(x) ? Math.max(0, Math.floor(x)) : def;
const fraction = (x: number | undefined, def: number) =>
  x !== undefined && Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : def;

/** What a field of the initial settings falls back to when it is missing or not a number. */
export const FALLBACK_FLEET_SETTINGS: FleetSettings = {
  concurrency: 100,
  floors: { standard: 0.1, batch: 0.05 },
  leaseTtlSeconds: 60,
  globalMaxQueued: 20_000,
};

/**
 * Applies a patch to fleet settings, clamping values instead of throwing (floors and the interactive
 * reserve to [0, 1], TTL ≥ 1 s, concurrency and globalMaxQueued to the maxima the snapshot's bound is
 * sized for). An interactive reserve neither had nor given stays absent (the scheduler workflow then
 * gives it the default).
 */
export function sanitizeFleet(s: FleetSettings, p: SettingsPatch = {}): FleetSettings {
  const reserve =
    p.interactiveReserve !== undefined || s.interactiveReserve !== undefined
      ? { interactiveReserve: fraction(p.interactiveReserve, s.interactiveReserve ?? 0) }
      : {};
  return {
    concurrency: Math.min(MAX_CONCURRENCY, count(p.concurrency, s.concurrency)),
    floors: {
      standard: fraction(p.floors?.standard, s.floors.standard),
      batch: fraction(p.floors?.batch, s.floors.batch),
    },
    leaseTtlSeconds: Math.max(1, count(p.leaseTtlSeconds, s.leaseTtlSeconds)),
    globalMaxQueued: Math.min(MAX_GLOBAL_QUEUED, count(p.globalMaxQueued, s.globalMaxQueued)),
    ...reserve,
    ...waitBounds(s.maxWaitSeconds, p.maxWaitSeconds),
  };
}

/** The lanes' wait bounds after a patch: whole seconds in [1, a day], 0 or null none; absent when no lane has one. */
export function waitBounds(
  had: FleetSettings['maxWaitSeconds'],
  patch: SettingsPatch['maxWaitSeconds'],
): Pick<FleetSettings, 'maxWaitSeconds'> {
  const out: Partial<Record<Priority, number>> = {};
  for (const lane of PRIORITIES) {
    const given = patch && lane in patch ? patch[lane] : had?.[lane];
    const n = typeof given === 'number' && Number.isFinite(given) ? Math.floor(given) : 0;
    if (n > 0) out[lane] = Math.min(MAX_WAIT_BOUND_SECONDS, n);
  }
  return Object.keys(out).length > 0 ? { maxWaitSeconds: out } : {};
}
