import { describe, expect, it } from 'vitest';
import { ResumingPager, type Page } from '../../../src/fleet/resuming-pager';

/** A listing of `n` numbers per query, `per` a page; the token is the next offset. */
function listing(n: Record<string, number>, per: number) {
  const asked: string[] = [];
  let failAt: number | null = null;
  const listPage = async (query: string, token: Uint8Array | null): Promise<Page<number>> => {
    const from = token ? token[0]! : 0;
    asked.push(`${query}@${from}`);
    if (failAt === from) throw new Error('bad token');
    const to = Math.min(n[query]!, from + per);
    const items = Array.from({ length: to - from }, (_, i) => from + i);
    return { items, next: to < n[query]! ? Uint8Array.of(to) : null };
  };
  return { listPage, asked, failOnce: (at: number) => (failAt = at), heal: () => (failAt = null) };
}

const readAll = async (p: ResumingPager<number>, qs: string[]) => {
  const seen: number[] = [];
  await p.read(qs, async (items) => void seen.push(...items));
  return seen;
};

describe('ResumingPager', () => {
  it('goes on where the previous call stopped, and starts over after the last page', async () => {
    const l = listing({ a: 7, b: 2 }, 2);
    const p = new ResumingPager(l.listPage, 2);
    expect(await readAll(p, ['a', 'b'])).toEqual([0, 1, 2, 3, 0, 1]);
    expect(await readAll(p, ['a', 'b'])).toEqual([4, 5, 6, 0, 1]);
    expect(await readAll(p, ['a', 'b'])).toEqual([0, 1, 2, 3, 0, 1]);
  });

  it('starts a failed query over, keeps the others, forgets queries no longer asked', async () => {
    const l = listing({ a: 9, b: 9 }, 2);
    const p = new ResumingPager(l.listPage, 1);
    await readAll(p, ['a', 'b']); // a@2, b@2 next
    l.failOnce(2);
    await expect(readAll(p, ['a', 'b'])).rejects.toThrow('bad token');
    l.heal();
    expect(await readAll(p, ['a', 'b'])).toEqual([0, 1, 2, 3]); // a over, b from 2
    expect(await readAll(p, ['b'])).toEqual([4, 5]);
    expect(await readAll(p, ['a', 'b'])).toEqual([0, 1, 6, 7]);
  });
});
