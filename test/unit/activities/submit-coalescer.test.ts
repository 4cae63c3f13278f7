import { describe, expect, it } from 'vitest';
import { SubmitCoalescer } from '../../../src/activities/submit-coalescer';
import type { SubmitResult, UnitSubmission } from '../../../src/scheduler/types';

const unit = (i: number): UnitSubmission => ({ runId: `r${i}`, tenant: 't', priority: 'standard', cost: 1 });
const accepted = (units: UnitSubmission[]): SubmitResult[] =>
  units.map((u) => ({ runId: u.runId, accepted: true, duplicate: false, held: false }));

describe('SubmitCoalescer', () => {
  it('sends the submissions of one linger as one message and answers each its own results, in order', async () => {
    const sent: string[][] = [];
    const c = new SubmitCoalescer(
      async (units) => {
        sent.push(units.map((u) => u.runId));
        return accepted(units);
      },
      { lingerMs: 5, maxUnits: 100, maxInFlight: 2 },
    );
    const answers = await Promise.all([
      c.submit([unit(1)]),
      c.submit([unit(2), unit(3)]),
      c.submit([unit(4)]),
    ]);
    expect(sent).toEqual([['r1', 'r2', 'r3', 'r4']]);
    expect(answers.map((a) => a.map((r) => r.runId))).toEqual([['r1'], ['r2', 'r3'], ['r4']]);
  });

  it('keeps at most maxInFlight messages out and at most maxUnits units in one', async () => {
    let out = 0;
    let most = 0;
    const sizes: number[] = [];
    const c = new SubmitCoalescer(
      async (units) => {
        most = Math.max(most, ++out);
        sizes.push(units.length);
        await new Promise((r) => setTimeout(r, 10));
        out--;
        return accepted(units);
      },
      { lingerMs: 1, maxUnits: 3, maxInFlight: 2 },
    );
    await Promise.all(Array.from({ length: 10 }, (_, i) => c.submit([unit(i)])));
    expect(most).toBe(2);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(3);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(10);
  });

  it('a failed message fails only the submissions it carried', async () => {
    let calls = 0;
    const c = new SubmitCoalescer(
      async (units) => {
        if (calls++ === 0) throw new Error('scheduler away');
        return accepted(units);
      },
      { lingerMs: 1, maxUnits: 1, maxInFlight: 1 },
    );
    const [first, second] = await Promise.allSettled([c.submit([unit(1)]), c.submit([unit(2)])]);
    expect(first).toMatchObject({ status: 'rejected', reason: new Error('scheduler away') });
    expect(second).toMatchObject({ status: 'fulfilled', value: [{ runId: 'r2', accepted: true }] });
  });
});
