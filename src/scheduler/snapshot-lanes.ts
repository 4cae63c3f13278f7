import { bucketOf, storedName } from './key-queue';
import { MAX_TOKENS } from './limits';
import type { Flow, QueuedUnit } from './queue-state';
import type { KeysTuple, QueueTuple } from './snapshot-format';

/** Pool names to snapshot indices (from 1; 0 is the default pool). */
export type PoolIndex = Map<string, number>;

/**
 * Which slot the snapshot writes each of a flow's slots under. A slot keeps its stored name while
 * the fleet-wide count of named slots written (`budget.left`) lasts; past it, its units go to its
 * hash bucket (`bucketOf`) and share that bucket's turns after a restore.
 */
function writtenSlots(f: Flow, budget: { left: number }): Map<string, string> {
  const out = new Map<string, string>();
  for (const q of f.keys.slots.values()) {
    if (q.live === 0) continue;
    const name = storedName(q.key);
    if (name.startsWith('#')) out.set(q.key, name);
    else if (budget.left > 0) {
      budget.left--;
      out.set(q.key, name);
    } else out.set(q.key, bucketOf(q.key));
  }
  return out;
}

/**
 * A flow's queue and key slots as the snapshot writes them: units slot by slot (the slots that share
 * a written name together, in the order of the first), FIFO within a slot. Tags are relative to the
 * key-level virtual time, rounded up and at most MAX_TOKENS (a longer lead is forgiven), and 0 for
 * buckets (their lead is forgiven); the keys are 0 when the flow uses no key but the default.
 */
export function laneTuples(f: Flow, pools: PoolIndex, budget: { left: number }): [QueueTuple, KeysTuple] {
  const written = writtenSlots(f, budget);
  const groups = new Map<string, QueuedUnit[]>();
  const tags = new Map<string, number>();
  for (const q of f.keys.slots.values()) {
    const name = written.get(q.key);
    if (name === undefined) continue;
    const ahead = name.startsWith('#') ? 0 : Math.min(MAX_TOKENS, Math.max(0, Math.ceil(q.tag - f.keys.kv)));
    if (!groups.has(name)) {
      groups.set(name, []);
      tags.set(name, ahead);
    }
    const units = groups.get(name) as QueuedUnit[];
    for (let i = q.head; i < q.units.length; i++) if (q.units[i]!.live) units.push(q.units[i]!);
  }
  const ids: string[] = [];
  const costs: number[] = [];
  const attempts: number[] = [];
  const poolOf: number[] = [];
  const slots: string[] = [];
  let retried = false;
  let pooled = false;
  for (const [name, units] of groups)
    for (const u of units) {
      ids.push(u.runId);
      costs.push(u.cost);
      attempts.push(u.attempt);
      retried ||= u.attempt !== 0;
      const p = pools.get(u.pool) ?? 0;
      poolOf.push(p);
      pooled ||= p !== 0;
      slots.push(name);
    }
  const a = retried ? attempts : [];
  const names = [...groups.keys()];
  if (names.length === 0 || (names.length === 1 && names[0] === ''))
    return [pooled ? [ids, costs, a, poolOf] : [ids, costs, a], 0];
  return [
    [ids, costs, a, pooled ? poolOf : [], slots],
    [0, names, names.map((n) => tags.get(n) ?? 0)],
  ];
}
