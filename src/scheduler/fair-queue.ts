import { IndexedHeap } from './heap';
import { KeyedQueue } from './key-queue';
import type { Flow, Lane, QueuedUnit, TenantState } from './queue-state';

/*
 * Start-time fair queuing (Goyal, Vin & Cheng 1996) across the tenants of one lane.
 * Each backlogged tenant is a flow keyed by the virtual start tag of its head unit;
 * the smallest tag is served and advances by cost/weight. Chosen over finish-tag
 * WFQ/SCFQ because:
 *  - its fairness bound holds on a server whose rate varies, and ours does (the
 *    governor moves concurrency and tokens-per-minute all the time);
 *  - the key does not depend on the head unit's cost, so cancelling a queued head
 *    (a tombstone) never invalidates the heap;
 *  - one heap of flows (not of units) makes a decision O(log T) in the number of
 *    backlogged tenants, whatever their backlog.
 * Bound: for two flows backlogged over an interval, |tokens_i/w_i - tokens_j/w_j|
 * <= maxCost_i/w_i + maxCost_j/w_j. A flow entering the heap starts at
 * max(own tag, lane virtual time), so time spent idle or parked banks no credit.
 * The tag advances by cost / tenant weight whatever fairness key the unit came from: inside the
 * flow, keys share the tenant's turns (`key-queue.ts`), and more keys never buy more turns.
 */
export class LaneQueue {
  readonly heap = new IndexedHeap<Flow>(byTag);
  /** Virtual time: start tag of the unit admitted last. */
  vtime = 0;
  /** Live queued units in the lane, parked tenants included. */
  units = 0;

  constructor(readonly lane: Lane) {}

  /** Puts an eligible backlogged flow into contention. */
  enter(f: Flow): void {
    if (f.tag < this.vtime) f.tag = this.vtime;
    this.heap.push(f);
  }

  leave(f: Flow): void {
    this.heap.remove(f);
  }

  top(): Flow | undefined {
    return this.heap.peek();
  }

  /**
   * Takes the head unit of `f` for admission and advances its tag. `f` is the top flow, or one the
   * fleet is held for (`pass-over.ts`): virtual time then advances only to the top's tag, so no
   * flow in the heap is ever behind it.
   */
  serve(f: Flow): QueuedUnit {
    const start = Math.min(f.tag, (this.top() ?? f).tag);
    const u = popHead(f);
    if (start > this.vtime) this.vtime = start;
    f.tag += u.cost / f.tenant.settings.weight;
    this.units--;
    this.heap.update(f);
    return u;
  }
}

function byTag(x: Flow, y: Flow): boolean {
  return x.tag < y.tag || (x.tag === y.tag && x.tenant.ord < y.tenant.ord);
}

export function newFlow(tenant: TenantState, lane: Lane): Flow {
  const keys = new KeyedQueue<QueuedUnit>();
  return {
    tenant,
    lane,
    tag: 0,
    hi: -1,
    keys,
    get units() {
      return keys.units;
    },
    get head() {
      return keys.head;
    },
    get live() {
      return keys.live;
    },
  };
}

/** Queues `u` under its fairness key; true when the flow's head unit changed (the tenant needs a refresh). */
export function pushUnit(f: Flow, u: QueuedUnit): boolean {
  return f.keys.push(u);
}

/** Takes the head unit; its key's tag advances by cost / the key's weight (`keyWeights`, else 1; buckets 1). */
function popHead(f: Flow): QueuedUnit {
  return f.keys.pop(f.tenant.settings.keyWeights);
}

/**
 * Moves the live unit at `i` (past the head, in the head key's FIFO) to the head; the units it
 * passes keep their order behind it. O(i - head): callers bound `i`.
 */
export function promote(f: Flow, i: number): void {
  f.keys.promote(i);
}

/** Marks `u` cancelled; its key's FIFO drops it when it reaches the head. */
export function tombstone(f: Flow, u: QueuedUnit): void {
  f.keys.tombstone(u);
}

/** Live units of the flow: key by key, FIFO within a key (with no keys: the flow's FIFO). */
export function liveUnits(f: Flow): Generator<QueuedUnit> {
  return f.keys.liveUnits();
}
