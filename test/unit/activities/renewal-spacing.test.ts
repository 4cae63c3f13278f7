import { describe, expect, it } from 'vitest';
import { RenewalSpacing } from '../../../src/activities/renewal-spacing';

const r = (runId: string, attempt: number, usedTokens: number) => ({ runId, attempt, usedTokens });

describe('renewal spacing: one renewal per lease per gap, the newest', () => {
  it("a lease's first renewal goes at once; later ones wait out the gap, the newest wins", () => {
    const s = new RenewalSpacing();
    s.add(r('a', 0, 1), 1_000);
    expect(s.due(0)).toEqual([r('a', 0, 1)]);
    s.add(r('a', 0, 2), 1_000);
    s.add(r('a', 0, 3), 1_000);
    expect(s.due(500)).toEqual([]);
    expect(s.size).toBe(1);
    expect(s.due(999)).toEqual([]);
    expect(s.due(1_000)).toEqual([r('a', 0, 3)]);
    expect(s.size).toBe(0);
    expect(s.due(5_000)).toEqual([]);
  });

  it('leases are spaced apart independently, and a new attempt is a new lease', () => {
    const s = new RenewalSpacing();
    s.add(r('a', 0, 1), 1_000);
    s.add(r('b', 0, 1), 1_000);
    expect(s.due(0).map((x) => x.runId)).toEqual(['a', 'b']);
    s.add(r('a', 1, 0), 1_000);
    s.add(r('b', 0, 2), 1_000);
    expect(s.due(10)).toEqual([r('a', 1, 0)]);
  });

  it("a release drops what waits and forgets the lease's last renewal", () => {
    const s = new RenewalSpacing();
    s.add(r('a', 0, 1), 1_000);
    s.due(0);
    s.add(r('a', 0, 2), 1_000);
    s.drop('a');
    expect(s.due(2_000)).toEqual([]);
    s.add(r('a', 0, 3), 1_000);
    expect(s.due(2_001)).toEqual([r('a', 0, 3)]);
  });

  it('over a long step renewed every 100 ms with a 20 s gap, the scheduler sees one renewal per 20 s', () => {
    const s = new RenewalSpacing();
    const sent: number[] = [];
    for (let t = 0; t <= 60_000; t += 100) {
      s.add(r('a', 0, t), 20_000);
      if (s.due(t).length) sent.push(t);
    }
    expect(sent).toEqual([0, 20_000, 40_000, 60_000]);
  });
});
