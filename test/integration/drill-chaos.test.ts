import { describe, expect, it } from 'vitest';
import { runChaosDrill } from '../../bench/scenarios/drill-chaos';
import { expectEveryUnitOnce, SIZE, UNITS } from '../support/drills';
import { childWorkersUseSuiteBundle } from '../support/suite-bundle';

childWorkersUseSuiteBundle();

/**
 * The chaos drill strikes its faults 1–3 s apart instead of waiting for recovery after each (every
 * SIGKILL costs Temporal's 10 s workflow-task timeout), which keeps it within two minutes. Half
 * its units run on a user's agent (bench/agents/model-words.ts: ctx.model calls whose prompts repeat
 * a word as often as the input says) served by `fairway worker --agents`, which the SIGKILLs hit too.
 */
describe('chaos drill', () => {
  it('chaos: workers SIGKILLed three times and Temporal restarted once; every unit completes exactly once', async () => {
    const r = await runChaosDrill({ ...SIZE, kills: 3, seed: 6, settle: false });
    const l = r.ledger;
    console.log(
      `chaos drill: ${r.faults.map((f) => `${f.kind} recovered in ${f.recoveryMs} ms`).join(', ')}; ` +
        `${r.modelUnits.units} model units (${r.modelUnits.calls} calls, ${r.modelUnits.words.join('–')} words, ` +
        `worst cases ${r.modelUnits.worstCase.join('–')}); spent ${l.spent}, billed ${l.billed}, ` +
        `cut calls ${r.cut.calls} (${r.cut.modelCalls} ctx.model, billed ${r.cut.billed}, worst-case surplus ${r.cut.surplus}), ` +
        `spent − bill ${l.spent - l.billed}; ${r.seconds.toFixed(0)} s`,
    );
    expect(r.faults.filter((f) => f.kind === 'kill-worker')).toHaveLength(3);
    expect(r.faults.filter((f) => f.kind === 'restart-temporal')).toHaveLength(1);
    // A SIGKILL may cut a step the next worker runs again (served twice, its effect refused).
    expectEveryUnitOnce(r, true);
    // The prompts' lengths differ unit to unit: the tokenizer's count, not a fixed step size, decides
    // what each ctx.model call reserves.
    expect(r.modelUnits.units).toBe(Math.ceil(UNITS / 2));
    expect(r.modelUnits.worstCase[1]).toBeGreaterThan(4 * r.modelUnits.worstCase[0]);
    // Nothing stays reserved, and the ledger is the bill exactly: a call a SIGKILL cut after the
    // provider billed it was charged its worst case provisionally and corrected to its bill once the
    // simulator's usage endpoint answered for it; no charge was booked twice. The kills strike at
    // random moments, so a run may cut no call: agent-model-ledger's kill case cuts calls on purpose.
    expect(l.reserved).toBe(0);
    expect(l.billed).toBeGreaterThan(0);
    expect(l.spent).toBe(l.billed);
  });
});
