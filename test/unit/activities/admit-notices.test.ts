import { describe, expect, it } from 'vitest';
import { noticesWithGrace } from '../../../src/activities/admit-notices';

describe('admission notices wait a little for their run to be started', () => {
  it('a run started within the grace is told; one never started is answered unreachable', async () => {
    const tries = new Map<string, number>();
    const startedAfter: Record<string, number> = { early: 0, late: 3, orphan: Infinity };
    const unreachable = await noticesWithGrace(
      ['early', 'late', 'orphan'],
      async (id) => {
        const n = (tries.get(id) ?? 0) + 1;
        tries.set(id, n);
        return n > startedAfter[id]!;
      },
      1_500,
    );
    expect(unreachable).toEqual(['orphan']);
    expect(tries.get('early')).toBe(1);
    expect(tries.get('late')).toBe(4);
    // The orphan was tried again until the grace ran out, and no longer.
    expect(tries.get('orphan')).toBeGreaterThan(3);
    expect(tries.get('orphan')).toBeLessThan(10);
  });

  it('every notice is tried once before any missing one is tried again', async () => {
    const order: string[] = [];
    await noticesWithGrace(
      ['a', 'b', 'c'],
      async (id) => {
        order.push(id);
        return id !== 'a';
      },
      150,
    );
    expect(order.slice(0, 3)).toEqual(['a', 'b', 'c']);
    expect(order.slice(3).every((id) => id === 'a')).toBe(true);
  });
});
