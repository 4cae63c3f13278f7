import type { TestStack } from './stack';
import { waitFor } from './stack';

/**
 * Where each of `runIds` stands in the order the runs' first model calls reached the stack's
 * simulator (0 first, over every run it has seen), once each of them has made one: fairness and
 * floors measured where the work happens, not at the scheduler's decision. Throws if some run has
 * made no call within `timeoutMs`.
 */
export async function firstCallRanks(
  s: TestStack,
  runIds: readonly string[],
  timeoutMs = 120_000,
): Promise<Map<string, number>> {
  const log = s.sim!.state.firstCalls;
  await waitFor(
    async () => runIds.filter((id) => log.get(id) === undefined),
    (missing) => missing.length === 0,
    timeoutMs,
    250,
  );
  const rank = new Map(log.arrivals().map((id, i) => [id, i] as const));
  return new Map(runIds.map((id) => [id, rank.get(id)!] as const));
}

/** How many of `ranks` lie in [from, to]. */
export function ranksWithin(ranks: Iterable<number>, from: number, to: number): number {
  let n = 0;
  for (const r of ranks) if (r >= from && r <= to) n += 1;
  return n;
}
