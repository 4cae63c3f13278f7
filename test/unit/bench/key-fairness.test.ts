import { describe, expect, it } from 'vitest';
import { backloggedShare, checkTurns, turnBound } from '../../../bench/lib/key-fairness';

/** `n` ids `prefix-0` … */
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('bench keys: the checks over first-call orders', () => {
  it("states check 1's bound: k + 1 at one slot (the integration test's), k + 2·slots − 1 beyond", () => {
    expect(turnBound(1, 1)).toBe(2);
    expect(turnBound(5, 1)).toBe(6);
    expect(turnBound(3, 10)).toBe(22);
  });

  it('passes keys taking turns, and fails a FIFO in which the users wait behind the whale', () => {
    const whale = ids('w', 20);
    const users = new Map([
      ['a', ids('a', 2)],
      ['b', ids('b', 2)],
    ]);
    // Two whale runs started before the users arrived; then the three keys take turns.
    const fair = ['w-0', 'w-1', 'w-2', 'a-0', 'b-0', 'w-3', 'a-1', 'b-1', ...whale.slice(4)];
    const ok = checkTurns(fair, whale, users, 2, 1);
    expect(ok.runs.map((r) => r.whaleAhead)).toEqual([1, 2, 1, 2]);
    expect(ok.over).toEqual([]);
    expect(ok.pass).toBe(true);
    expect(ok.whaleBacklogAtArrival).toBe(18);

    const fifo = [...whale, 'a-0', 'b-0', 'a-1', 'b-1'];
    const bad = checkTurns(fifo, whale, users, 2, 1);
    expect(bad.pass).toBe(false);
    expect(bad.worst).toMatchObject({ whaleAhead: 18 });
    expect(bad.over).toHaveLength(4);
  });

  it('does not pass when the whale had no backlog left to hold the users behind, nor when a user never started', () => {
    const whale = ids('w', 4);
    const users = new Map([['a', ids('a', 2)]]);
    expect(checkTurns(['w-0', 'w-1', 'a-0', 'a-1', 'w-2', 'w-3'], whale, users, 2, 1).backlogged).toBe(false);
    expect(() => checkTurns(['w-0', 'a-0'], whale, users, 0, 1)).toThrow(/a's run 2/);
  });

  it("measures each tenant's token share until the first tenant's last run started", () => {
    // A: 4 runs of 40 tokens, B: 6 runs of 80; A's last start ends the interval at rank 6.
    const order = ['a-0', 'b-0', 'a-1', 'a-2', 'b-1', 'b-2', 'a-3', 'b-3', 'b-4', 'b-5'];
    const r = backloggedShare(order, [
      { name: 'A', runs: ids('a', 4), cost: 40 },
      { name: 'B', runs: ids('b', 6), cost: 80 },
    ]);
    expect(r).toMatchObject({ from: 0, to: 6, endedBy: 'A' });
    expect(r.runs).toEqual({ A: 4, B: 3 });
    expect(r.tokens).toEqual({ A: 160, B: 240 });
    expect(r.share.A).toBeCloseTo(0.4);
    expect(() => backloggedShare(order.slice(1), [{ name: 'A', runs: ids('a', 4), cost: 1 }])).toThrow(/a-0/);
  });
});
