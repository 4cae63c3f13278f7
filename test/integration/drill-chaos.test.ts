import { describe, expect, it } from 'vitest';
import { runChaosDrill } from '../../bench/scenarios/drill-chaos';
import { expectEveryUnitOnce, SIZE, UNITS } from '../support/drills';
import { childWorkersUseSuiteBundle } from '../support/suite-bundle';

childWorkersUseSuiteBundle();

/**
 * The chaos drill strikes its faults 1–3 s apart instead of waiting for recovery after each (every
 * SIGKILL costs Temporal's 10 s workflow-task timeout), which keeps it well inside a minute.
 */
describe('chaos drill', () => {
  it('chaos: worker SIGKILLed three times and Temporal restarted once; every unit completes exactly once', async () => {
    const r = await runChaosDrill({ ...SIZE, kills: 3, seed: 6, settle: false });
    console.log(
      `chaos drill: ${r.faults.map((f) => `${f.kind} recovered in ${f.recoveryMs} ms`).join(', ')}`,
    );
    expect(r.faults.filter((f) => f.kind === 'kill-worker')).toHaveLength(3);
    expect(r.faults.filter((f) => f.kind === 'restart-temporal')).toHaveLength(1);
    // The ledger never charges less than the provider billed, and nothing stays reserved. It can charge
    // more: a call a SIGKILL cut before the provider served it is charged its worst case (durable call
    // charges), at most one call per run in flight at each of the four faults.
    const l = r.ledger;
    // A SIGKILL may cut a step the next worker runs again (served twice, its effect refused).
    expectEveryUnitOnce(r, true);
    expect(l.reserved).toBe(0);
    expect(l.spent).toBeGreaterThanOrEqual(l.billed);
    const perCall = Math.ceil(l.billed / (UNITS * SIZE.steps));
    expect(l.spent - l.billed).toBeLessThanOrEqual(4 * SIZE.concurrency * perCall);
  });
});
