/** A fixed-capacity ring: pushing past capacity drops the oldest item. */
export class Ring<T> {
  private readonly buf: (T | undefined)[];
  private start = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error('capacity must be a positive integer');
    this.buf = new Array<T | undefined>(capacity);
  }

  push(item: T): void {
    if (this.size < this.capacity) {
      this.buf[(this.start + this.size) % this.capacity] = item;
      this.size++;
    } else {
      this.buf[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** Oldest first. */
  items(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.size; i++) out.push(this.buf[(this.start + i) % this.capacity] as T);
    return out;
  }

  get length(): number {
    return this.size;
  }
}
