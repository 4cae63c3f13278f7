import { IndexedHeap } from './heap';
import type { Flow, QueuedUnit } from './queue-state';
import type { KeyPosition } from './types';

/** A key slot's cursor in the predicted service order: its next live unit and that unit's start tag. */
interface Cursor {
  units: readonly QueuedUnit[];
  i: number;
  tag: number;
  order: string;
  weight: number;
  hi: number;
}

const byTag = (x: Cursor, y: Cursor) => x.tag < y.tag || (x.tag === y.tag && x.order < y.order);

function skipDead(c: Cursor): boolean {
  while (c.i < c.units.length && !(c.units[c.i] as QueuedUnit).live) c.i++;
  return c.i < c.units.length;
}

/**
 * The flow's live units in the order it would serve them, predicted from the key-level tags as they
 * stand (no new arrivals): the slot with the smallest start tag goes next (ties on its stored name),
 * its units FIFO, each advancing its slot's tag by cost / the key's weight (`key-queue.ts`). With no
 * keys, the flow's FIFO. Lazy, O(log K) a unit: for queries only.
 */
export function* serviceOrder(f: Flow): Generator<QueuedUnit> {
  const weights = f.tenant.settings.keyWeights;
  const heap = new IndexedHeap<Cursor>(byTag);
  for (const q of f.keys.slots.values()) {
    if (q.live === 0) continue;
    const c = {
      units: q.units,
      i: q.head,
      tag: q.tag,
      order: q.order,
      weight: weights?.[q.key] ?? 1,
      hi: -1,
    };
    if (skipDead(c)) heap.push(c);
  }
  for (let c = heap.pop(); c; c = heap.pop()) {
    const u = c.units[c.i] as QueuedUnit;
    yield u;
    c.tag += u.cost / c.weight;
    c.i++;
    if (skipDead(c)) heap.push(c);
  }
}

/**
 * Where `u` stands among its tenant's fairness keys in its lane (see `serviceOrder`), and the units
 * of its flow served before it, in that order. O(units ahead × log K).
 */
export function keyPosition(u: QueuedUnit): { position: KeyPosition; ahead: QueuedUnit[] } {
  const flow = u.tenant.flows[u.lane];
  const ahead: QueuedUnit[] = [];
  const keysFirst = new Set<string>();
  for (const v of serviceOrder(flow)) {
    if (v === u) break;
    ahead.push(v);
    if (v.slot !== u.slot) keysFirst.add(v.slot);
  }
  let keysQueued = 0;
  for (const q of flow.keys.slots.values()) if (q.live > 0) keysQueued++;
  return {
    position: {
      keysAhead: keysFirst.size,
      keysQueued,
      unitsAheadInKey: ahead.length - ahead.filter((v) => v.slot !== u.slot).length,
      unitsAheadInTenant: ahead.length,
      ...(u.slot !== u.key ? { bucket: u.slot } : {}),
    },
    ahead,
  };
}
