import { expect } from 'vitest';
import type { runChaosDrill } from '../../bench/scenarios/drill-chaos';

/**
 * Issue 6's drills at reduced size (`npm run drill:deploy` and `npm run drill:chaos` run 1,000 units
 * with the same scenarios and checks), one drill per test file so that they run beside each other and
 * beside the other integration files. Each starts its own dev server (the chaos drill's on a SQLite
 * file, so that it can restart it with its state; the deploy drill's in memory) and runs the worker
 * as a child process.
 */
export const UNITS = Number(process.env.DRILL_UNITS ?? 100);
/*
 * 100 units of two 250-ms steps at 25 in flight: as long in steps as 200 units of 150 ms at 50 (so
 * faults and the drain still meet runs in flight), for half the runs' cost (the suite is CPU-bound).
 * 250 ms is the longest step that still runs as a local activity, as the 150-ms ones did.
 */
export const SIZE = { units: UNITS, concurrency: 25, steps: 2, stepMs: 250, timeoutMs: 150_000 };

/**
 * Every unit accepted, completed exactly once, its effect applied once and delivered once (the sink's
 * own count per key); no run had two model calls in flight at once (the simulator's log). Without
 * crashes (`reruns` false) no step was served twice and the effect step ran once per unit.
 */
export function expectEveryUnitOnce(
  r: Pick<
    Awaited<ReturnType<typeof runChaosDrill>>,
    'accepted' | 'lostRunIds' | 'lost' | 'duplicated' | 'effects' | 'counters' | 'failures' | 'sink' | 'calls'
  > & { events?: { runs: number } },
  reruns: boolean,
) {
  expect(r.accepted).toBe(UNITS);
  // Runs of the events that arrived meanwhile count with the units, each once.
  const RUNS = UNITS + (r.events?.runs ?? 0);
  expect(r.lostRunIds).toEqual([]);
  expect(r.lost).toBe(0);
  // Where the effects land and the calls are served first; the system's own figures after.
  expect(r.sink, `keys delivered twice: ${r.sink.duplicatedSample.join(', ')}`).toMatchObject({
    deliveries: RUNS,
    distinctKeys: RUNS,
    duplicatedKeys: 0,
  });
  expect(r.calls.runsOverlapping, r.calls.sample.runsOverlapping.join(', ')).toBe(0);
  if (!reruns) {
    expect(r.calls.stepsServedTwice, r.calls.sample.stepsServedTwice.join(', ')).toBe(0);
    expect(r.effects.attempts, 'runs of the effect step').toBe(RUNS);
  }
  // The store's own count of keys applied twice, and admissions beyond one per run past expiries.
  expect(r.duplicated).toBe(0);
  expect(r.effects).toMatchObject({ effects: RUNS, duplicates: 0 });
  // A lease that expired on a loaded machine is admitted again and counted in `expired`.
  expect(r.counters.admitted).toBeGreaterThanOrEqual(RUNS);
  expect((r.counters.admitted ?? 0) - (r.counters.expired ?? 0)).toBeLessThanOrEqual(RUNS);
  expect(r.counters).toMatchObject({
    completed: RUNS,
    failed: 0,
    cancelled: 0,
    inFlight: 0,
  });
  expect(r.failures).toEqual([]);
}
