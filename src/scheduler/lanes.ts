import type { CoreState } from './core';
import type { Lane } from './queue-state';

const EPS = 1e-9;

/*
 * Strict priority with floors. A lower lane that has admissible backlog accrues its
 * floor fraction of credit on every admission and takes the next admission once its
 * credit reaches 1, so it gets at least floor × admissions while higher lanes are
 * busy. Credit never goes below 0 (a lane served because nothing above it was
 * waiting banks no debt) and never above 1 + floor (the overshoot of the accrual that
 * crossed 1 is kept, otherwise a floor of 0.08 would yield 1 in 13, not 1 in 12.5),
 * so a higher-lane unit waits for at most one floor admission per lower lane.
 */
export function floorOf(s: CoreState, lane: Lane): number {
  return lane === 1 ? s.settings.floors.standard : lane === 2 ? s.settings.floors.batch : 0;
}

/** Lanes whose heap holds an admissible flow. */
export function admissibleLanes(s: CoreState): [boolean, boolean, boolean] {
  return [s.lanes[0].heap.size > 0, s.lanes[1].heap.size > 0, s.lanes[2].heap.size > 0];
}

/** The lane of the next admission, or null when nothing is admissible (pure). */
export function chooseLane(s: CoreState, avail: readonly boolean[]): Lane | null {
  let owed: Lane | null = null;
  for (const l of [1, 2] as const) {
    if (avail[l] && s.credits[l] >= 1 - EPS && (owed === null || s.credits[l] > s.credits[owed])) owed = l;
  }
  if (owed !== null) return owed;
  if (avail[0]) return 0;
  if (avail[1]) return 1;
  if (avail[2]) return 2;
  return null;
}

/** Books an admission in `lane`, given which lanes were admissible before it. */
export function chargeCredits(s: CoreState, lane: Lane, availBefore: readonly boolean[]): void {
  for (const l of [1, 2] as const) {
    if (!availBefore[l]) continue;
    const f = floorOf(s, l);
    let c = s.credits[l] + f;
    if (l === lane) c -= 1;
    s.credits[l] = Math.min(1 + f, Math.max(0, c));
  }
}
