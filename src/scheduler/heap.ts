/** An item that remembers its own slot in the heap that holds it (-1 when in none). */
export interface HeapItem {
  hi: number;
}

/**
 * Binary min-heap whose items know their position, so removal and re-keying of an
 * arbitrary item are O(log n). `less` must be a strict total order (break ties on a
 * unique key): then the top is determined by the set of items alone, never by the
 * order of insertion, which is what makes a restored scheduler decide identically.
 */
export class IndexedHeap<T extends HeapItem> {
  private readonly a: T[] = [];

  constructor(private readonly less: (x: T, y: T) => boolean) {}

  get size(): number {
    return this.a.length;
  }

  /** The items in heap order (not sorted): for read-only scans. */
  items(): readonly T[] {
    return this.a;
  }

  peek(): T | undefined {
    return this.a[0];
  }

  push(x: T): void {
    x.hi = this.a.length;
    this.a.push(x);
    this.up(x.hi);
  }

  pop(): T | undefined {
    const top = this.a[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  remove(x: T): void {
    const i = x.hi;
    if (i < 0 || this.a[i] !== x) return;
    const last = this.a.pop() as T;
    x.hi = -1;
    if (last === x) return;
    this.a[i] = last;
    last.hi = i;
    this.update(last);
  }

  /** Restores order after the key of `x` changed in either direction. */
  update(x: T): void {
    if (x.hi < 0) return;
    this.up(x.hi);
    this.down(x.hi);
  }

  private up(i: number): void {
    const a = this.a;
    const x = a[i] as T;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = a[p] as T;
      if (!this.less(x, parent)) break;
      a[i] = parent;
      parent.hi = i;
      i = p;
    }
    a[i] = x;
    x.hi = i;
  }

  private down(i: number): void {
    const a = this.a;
    const n = a.length;
    const x = a[i] as T;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.less(a[r] as T, a[l] as T)) c = r;
      const child = a[c] as T;
      if (!this.less(child, x)) break;
      a[i] = child;
      child.hi = i;
      i = c;
    }
    a[i] = x;
    x.hi = i;
  }
}
