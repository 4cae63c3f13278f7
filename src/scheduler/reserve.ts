import type { CoreState } from './core';
import { chooseLane } from './lanes';
import type { Lane } from './queue-state';

/** The interactive reserve of a chain begun with this setting (`FLEET_INTERACTIVE_RESERVE`). */
export const DEFAULT_INTERACTIVE_RESERVE = 0.05;

/**
 * Slots kept free for the interactive lane when `cap` slots are in force: the reserve fraction of
 * them rounded up, so a small fleet keeps one, but never all of them (one slot is always usable by
 * every lane, or a lone slot would admit nothing but interactive work). A scheduler begun before the
 * setting existed has none (undefined), so its history replays unchanged.
 */
export function reservedSlots(s: CoreState, cap: number): number {
  const f = s.settings.interactiveReserve ?? 0;
  if (!(f > 0) || cap <= 1) return 0;
  return Math.min(cap - 1, Math.ceil(f * cap - 1e-9));
}

/**
 * Whether a unit of `lane` may take a slot now: the interactive lane up to the cap, lower lanes only
 * below the reserve. An interactive arrival then finds a free slot at once instead of waiting for a
 * batch step to end (pure).
 */
export function laneMayTake(s: CoreState, lane: Lane, cap: number): boolean {
  const busy = s.leases.size;
  return lane === 0 ? busy < cap : busy < cap - reservedSlots(s, cap);
}

/**
 * The lane of the next admission with `cap` slots in force: the floors' choice, unless it is a lower
 * lane held back by the reserve, then the interactive lane if it has work, else none (pure).
 */
export function pickLane(s: CoreState, avail: readonly boolean[], cap: number): Lane | null {
  const lane = chooseLane(s, avail);
  if (lane === null || laneMayTake(s, lane, cap)) return lane;
  return avail[0] && laneMayTake(s, 0, cap) ? 0 : null;
}
