import { IndexedHeap } from './heap';
import { FLOW_KEY_BUCKETS, MAX_FLOW_KEYS } from './limits';

/*
 * Start-time fair queuing of fairness keys inside one tenant's flow in one lane: the second level
 * of a hierarchical scheduler. The lane's heap picks the tenant by its tenant-level tag (which
 * advances by cost / tenant weight whatever key the unit came from, so a tenant's share never grows
 * with the number of keys it uses); this picks the key with the smallest key-level tag, whose head
 * unit is the flow's head. A key's tag advances by cost / key weight when its unit is served.
 *
 * Bound (SFQ, per flow): while keys i and j are both backlogged, the weighted tokens they were served
 * differ by at most maxCost_i/w_i + maxCost_j/w_j. A key that was idle re-enters at max(own tag, kv),
 * `kv` being the start tag of the unit served last: idleness banks no credit, and a key that left
 * owing service (its tag above kv) still owes it, so re-submitting one unit at a time does not jump
 * the line. An idle key is forgotten once kv passes its tag: it then owes nothing.
 *
 * With every unit under the default key '' the flow holds one slot and is exactly a FIFO.
 */

/** What the key queue reads and writes of a queued unit (`U`). */
export interface KeyedUnit {
  cost: number;
  live: boolean;
  /** Its fairness key ('' the default). */
  key: string;
  /** The slot it is queued in: set by `push`. */
  slot: string;
}

/** A fairness key's queue in a flow: a FIFO and its start tag. Also the slot of a bucket (`#n`). */
export interface KeySlot<U extends KeyedUnit = KeyedUnit> {
  key: string;
  /** Its stored name (`storedName`), fixed at creation: equal tags break on it, so a restore decides alike. */
  order: string;
  /** Start tag of the head unit while backlogged; the last finish tag while idle. */
  tag: number;
  units: U[];
  head: number;
  live: number;
  /** Slot in the ready heap (backlogged) or the idle heap (owing service), -1 in neither. */
  hi: number;
}

/** Named slots a flow holds before new keys go to buckets; the buckets are the rest of MAX_FLOW_KEYS. */
export const MAX_NAMED_KEYS = MAX_FLOW_KEYS - FLOW_KEY_BUCKETS;

/** A stable 32-bit hash of a key (FNV-1a over its UTF-16 code units). */
export function fnv1a(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The bucket of a key past the bound: `#` + its hash modulo FLOW_KEY_BUCKETS. */
export function bucketOf(key: string): string {
  return `#${fnv1a(key) % FLOW_KEY_BUCKETS}`;
}

/**
 * The name a slot is stored under in the snapshot: a key's digest, `~` + its hash in base 36 (at
 * most 7 characters for a key of up to 64), so a snapshot's size does not grow with key lengths.
 * Buckets, digests and the default key '' are their own names. Two keys of one flow whose hashes
 * collide (about 256² / 2³³ ≈ 1 in 130,000 for a flow at its bound) share a slot after a restore.
 */
export function storedName(slot: string): string {
  return slot === '' || isBucket(slot) || slot.startsWith('~') ? slot : `~${fnv1a(slot).toString(36)}`;
}

/** A slot shared by keys past the bound (`#n`), not a key of its own. */
export const isBucket = (slot: string): boolean => slot.startsWith('#');

const byTag = (x: KeySlot<KeyedUnit>, y: KeySlot<KeyedUnit>): boolean =>
  x.tag < y.tag || (x.tag === y.tag && (x.order < y.order || (x.order === y.order && x.key < y.key)));

const NONE: readonly never[] = [];

/** The keys of one flow. O(log K) per push, serve and cancel in the K slots held (K ≤ MAX_FLOW_KEYS). */
export class KeyedQueue<U extends KeyedUnit> {
  /** Key-level virtual time: start tag of the unit served last. */
  kv = 0;
  /** Live units over all keys. */
  live = 0;
  /** Slots held: backlogged, or idle and owing service. Insertion order is the snapshot's order. */
  readonly slots = new Map<string, KeySlot<U>>();
  private readonly ready = new IndexedHeap<KeySlot<U>>(byTag);
  private readonly idle = new IndexedHeap<KeySlot<U>>(byTag);
  private named = 0;

  /** The head slot's FIFO (empty while nothing is queued). */
  get units(): readonly U[] {
    return this.ready.peek()?.units ?? NONE;
  }

  get head(): number {
    return this.ready.peek()?.head ?? 0;
  }

  /**
   * The slot a new unit of `key` joins: its own (a restored slot stored under its digest takes its
   * name back), a new one while fewer than MAX_NAMED_KEYS are held, else a bucket.
   */
  slotName(key: string): string {
    if (this.slots.has(key) || isBucket(key)) return key;
    const stored = this.slots.get(storedName(key));
    if (stored) {
      this.rename(stored, key);
      return key;
    }
    return this.named < MAX_NAMED_KEYS ? key : bucketOf(key);
  }

  /**
   * A slot restored from a snapshot with its tag, before its units are pushed: idle until they are
   * (one that stays empty is forgotten once kv passes its tag).
   */
  restoreSlot(key: string, tag: number): void {
    const q = this.slotFor(key);
    q.tag = tag;
    if (q.live === 0 && q.hi < 0) this.idle.push(q);
  }

  /** Appends `u` to the slot of `u.key` (setting `u.slot`); true when the flow's head unit changed. */
  push(u: U): boolean {
    const before = this.ready.peek();
    const q = this.slotFor(this.slotName(u.key));
    u.slot = q.key;
    q.units.push(u);
    q.live++;
    this.live++;
    if (q.live === 1) {
      this.idle.remove(q);
      if (q.tag < this.kv) q.tag = this.kv;
      this.ready.push(q);
    }
    return this.ready.peek() !== before;
  }

  /** Takes the head unit of the top slot; its tag advances by cost / its key's weight (absent from `weights`: 1). */
  pop(weights: Readonly<Record<string, number>> | undefined): U {
    const q = this.ready.peek() as KeySlot<U>;
    const u = q.units[q.head] as U;
    q.head++;
    q.live--;
    this.live--;
    if (q.tag > this.kv) this.kv = q.tag;
    q.tag += u.cost / (weights?.[q.key] ?? 1);
    this.settle(q);
    while ((this.idle.peek()?.tag ?? Infinity) <= this.kv) this.drop(this.idle.pop() as KeySlot<U>);
    return u;
  }

  /** Moves the live unit at `i` of the top slot (past its head) to its head; those it passes keep their order. */
  promote(i: number): void {
    const q = this.ready.peek() as KeySlot<U>;
    const u = q.units[i] as U;
    for (let j = i; j > q.head; j--) q.units[j] = q.units[j - 1] as U;
    q.units[q.head] = u;
  }

  /** Marks `u` cancelled; its slot drops it when it reaches the head. */
  tombstone(u: U): void {
    const q = this.slots.get(u.slot);
    u.live = false;
    this.live--;
    if (!q) return;
    q.live--;
    this.settle(q);
  }

  /** Slots with live units, and how many of them are buckets: O(K), for the tenant's status. */
  backlogged(): { keys: number; buckets: number } {
    let keys = 0;
    let buckets = 0;
    for (const q of this.slots.values()) {
      if (q.live === 0) continue;
      keys++;
      if (isBucket(q.key)) buckets++;
    }
    return { keys, buckets };
  }

  /** Live units, slot by slot in the order slots were made, FIFO within a slot. */
  *liveUnits(): Generator<U> {
    for (const q of this.slots.values())
      for (let i = q.head; i < q.units.length; i++) {
        const u = q.units[i] as U;
        if (u.live) yield u;
      }
  }

  private slotFor(key: string): KeySlot<U> {
    let q = this.slots.get(key);
    if (!q) {
      q = { key, order: storedName(key), tag: this.kv, units: [], head: 0, live: 0, hi: -1 };
      this.slots.set(key, q);
      if (!isBucket(key)) this.named++;
    }
    return q;
  }

  /** After `q` lost a unit: skips tombstones; an emptied slot goes idle (owing service) or is forgotten. */
  private settle(q: KeySlot<U>): void {
    while (q.head < q.units.length && !(q.units[q.head] as U).live) q.head++;
    if (q.head === q.units.length) {
      q.units = [];
      q.head = 0;
    } else if (q.head > 1024 && q.head * 2 > q.units.length) {
      q.units = q.units.slice(q.head);
      q.head = 0;
    }
    if (q.live > 0) {
      this.ready.update(q);
      return;
    }
    this.ready.remove(q);
    if (q.tag > this.kv) this.idle.push(q);
    else this.drop(q);
  }

  private drop(q: KeySlot<U>): void {
    this.slots.delete(q.key);
    if (!isBucket(q.key)) this.named--;
  }

  /** Gives a slot restored under its digest its key back: once, O(its units). */
  private rename(q: KeySlot<U>, key: string): void {
    this.slots.delete(q.key);
    q.key = key;
    this.slots.set(key, q);
    for (let i = q.head; i < q.units.length; i++) {
      const u = q.units[i] as U;
      u.key = u.slot = key;
    }
    if (q.live > 0) this.ready.update(q);
    else this.idle.update(q);
  }
}
