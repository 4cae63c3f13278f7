import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IndexedHeap } from '../../../src/scheduler/heap';

interface Item {
  id: number;
  key: number;
  hi: number;
}

describe('IndexedHeap', () => {
  it('pops in key order through pushes, removals and re-keying', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.constantFrom('push', 'remove', 'rekey', 'pop'), fc.integer({ min: 0, max: 50 })),
          { maxLength: 200 },
        ),
        (ops) => {
          const heap = new IndexedHeap<Item>((x, y) => x.key < y.key || (x.key === y.key && x.id < y.id));
          const live: Item[] = [];
          let id = 0;
          for (const [op, n] of ops) {
            if (op === 'push') {
              const it: Item = { id: id++, key: n, hi: -1 };
              heap.push(it);
              live.push(it);
            } else if (live.length > 0) {
              const victim = live[n % live.length] as Item;
              if (op === 'remove') {
                heap.remove(victim);
                live.splice(live.indexOf(victim), 1);
                expect(victim.hi).toBe(-1);
              } else if (op === 'rekey') {
                victim.key = (victim.key * 7 + n) % 53;
                heap.update(victim);
              } else {
                const min = [...live].sort((a, b) => a.key - b.key || a.id - b.id)[0];
                expect(heap.pop()).toBe(min);
                live.splice(live.indexOf(min as Item), 1);
              }
            }
            expect(heap.size).toBe(live.length);
          }
        },
      ),
    );
  });
});
