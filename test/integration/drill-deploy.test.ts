import { describe, expect, it } from 'vitest';
import { runDeployDrill } from '../../bench/scenarios/drill-deploy';
import { expectEveryUnitOnce, SIZE } from '../support/drills';
import { childWorkersUseSuiteBundle } from '../support/suite-bundle';

childWorkersUseSuiteBundle();

describe('deploy drill', () => {
  it('deploy: drain refuses at the door, admits nothing, lets in-flight finish; v2 resumes; nothing lost or doubled', async () => {
    // In memory: the drill never restarts Temporal (the chaos drill does, on its file).
    const r = await runDeployDrill({ ...SIZE, inMemory: true });
    console.log(
      `deploy drill: drain ${r.drainMs} ms with ${r.atDrain.inFlight} in flight; resume → admission in ${r.timeToResumeMs} ms; ` +
        `${r.events.runs} event runs from ${r.events.sent} events`,
    );
    expect(r.atDrain.inFlight).toBeGreaterThan(0);
    expect(r.admissionsDuringDrain).toBe(0);
    expect(r.refused).toMatchObject({ status: 503, code: 'draining' });
    expect(r.refused.retryAfter).toBeGreaterThanOrEqual(1);
    expect(r.workerExit).toBe(0);
    expect(r.events.runs).toBeGreaterThan(0);
    // A drain and a graceful stop run nothing twice.
    expectEveryUnitOnce(r, false);
  });
});
