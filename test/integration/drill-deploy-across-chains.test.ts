import { describe, expect, it } from 'vitest';
import { runDeployDrill } from '../../bench/scenarios/drill-deploy';
import { SIZE, UNITS } from '../support/drills';
import { childWorkersUseSuiteBundle } from '../support/suite-bundle';

childWorkersUseSuiteBundle();

describe('deploy drill across a change that is not replay-safe', () => {
  it('deploy across a change that is not replay-safe: drain, runs finish, v1 stops, the scheduler is terminated, a new chain recovers, v2 starts, resume; nothing lost or doubled', async () => {
    // Runs queued before the terminate are nudged to the new chain, and a drained or absent chain is
    // checked again within REOFFER_AWAY_MAX_MS: the drill's own bound suffices.
    const r = await runDeployDrill({ ...SIZE, terminateScheduler: true });
    console.log(
      `deploy drill (terminate): drain ${r.drainMs} ms with ${r.atDrain.inFlight} in flight; new chain in ${r.newChainMs} ms; ` +
        `resume → admission in ${r.timeToResumeMs} ms`,
    );
    expect(r.atDrain.inFlight).toBeGreaterThan(0);
    expect(r.admissionsDuringDrain).toBe(0);
    expect(r.newChainMs).toBeGreaterThanOrEqual(0);
    expect(r.workerExit).toBe(0);
    expect(r.accepted).toBe(UNITS);
    expect(r.lostRunIds).toEqual([]);
    expect(r.duplicated).toBe(0);
    // The runs of the events that arrived throughout count with the units, each once, at the sink too.
    const runs = UNITS + r.events.runs;
    expect(r.events.runs).toBeGreaterThan(0);
    expect(r.effects).toMatchObject({ effects: runs, duplicates: 0 });
    // Counted where they land: once per key at the sink, no run with two model calls at once.
    expect(r.sink, r.sink.duplicatedSample.join(', ')).toMatchObject({
      deliveries: runs,
      distinctKeys: runs,
      duplicatedKeys: 0,
    });
    expect(r.calls.runsOverlapping, r.calls.sample.runsOverlapping.join(', ')).toBe(0);
    expect(r.counters).toMatchObject({ completed: runs, failed: 0, cancelled: 0, inFlight: 0 });
    expect(r.failures).toEqual([]);
  });
});
