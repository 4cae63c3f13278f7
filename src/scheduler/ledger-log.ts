import type { LedgerEntry } from './types';

type Kind = LedgerEntry['kind'];

/** Entries kept per tenant. */
export const LEDGER_RING_PER_TENANT = 200;
/*
 * A fleet-wide cap as well: the log travels in the continue-as-new input, which
 * Temporal caps at 2 MiB, so a thousand tenants may not keep 200 entries each.
 * Beyond it the oldest entry of the whole fleet goes first.
 */
export const LEDGER_RING_TOTAL = 4_000;

interface Entry {
  seq: number;
  at: number;
  runId: string;
  kind: Kind;
  tokens: number;
}

interface Ring {
  items: Entry[];
  start: number;
}

/** Compact entry: [seq, at ms, kind code, tokens, runId]. */
export type EntryTuple = [number, number, string, number, string];
export interface LedgerLogSnapshot {
  next: number;
  rings: [string, EntryTuple[]][];
}

const CODE: Record<Kind, string> = { reserve: 'r', settle: 's', release: 'l', expire: 'e', rollover: 'o' };
const KIND: Record<string, Kind> = { r: 'reserve', s: 'settle', l: 'release', e: 'expire', o: 'rollover' };

/** Bounded per-tenant rings of ledger movements, most recent kept. */
export class LedgerLog {
  private readonly rings = new Map<string, Ring>();
  private fifo: [Entry, Ring][] = [];
  private fifoHead = 0;
  private total = 0;
  private next = 1;

  append(tenant: string, at: number, runId: string, kind: Kind, tokens: number): void {
    const r = this.ring(tenant);
    const e: Entry = { seq: this.next++, at, runId, kind, tokens };
    r.items.push(e);
    this.fifo.push([e, r]);
    this.total++;
    if (r.items.length - r.start > LEDGER_RING_PER_TENANT) this.shiftRing(r);
    while (this.total > LEDGER_RING_TOTAL && this.fifoHead < this.fifo.length) {
      const [e, r] = this.fifo[this.fifoHead++] as [Entry, Ring];
      if (r.items[r.start] === e) this.shiftRing(r);
    }
    if (this.fifo.length - this.fifoHead > 2 * this.total + 1024) this.compactFifo();
  }

  /** Most recent first. */
  entries(tenant: string, limit: number): LedgerEntry[] {
    const r = this.rings.get(tenant);
    const out: LedgerEntry[] = [];
    if (!r) return out;
    for (let i = r.items.length - 1; i >= r.start && out.length < limit; i--) {
      const e = r.items[i] as Entry;
      out.push({ at: new Date(e.at).toISOString(), tenant, runId: e.runId, kind: e.kind, tokens: e.tokens });
    }
    return out;
  }

  snapshot(): LedgerLogSnapshot {
    const rings: [string, EntryTuple[]][] = [];
    for (const [tenant, r] of this.rings) {
      const live = r.items.slice(r.start);
      if (live.length > 0) rings.push([tenant, live.map((e) => [e.seq, e.at, CODE[e.kind], e.tokens, e.runId])]);
    }
    return { next: this.next, rings };
  }

  static restore(s: LedgerLogSnapshot): LedgerLog {
    const log = new LedgerLog();
    log.next = s.next;
    const all: [Entry, Ring][] = [];
    for (const [tenant, tuples] of s.rings) {
      const ring = log.ring(tenant);
      for (const [seq, at, code, tokens, runId] of tuples) {
        const e: Entry = { seq, at, runId, kind: KIND[code] ?? 'reserve', tokens };
        ring.items.push(e);
        all.push([e, ring]);
      }
      log.total += tuples.length;
    }
    log.fifo = all.sort((x, y) => x[0].seq - y[0].seq);
    return log;
  }

  private ring(tenant: string): Ring {
    let r = this.rings.get(tenant);
    if (!r) {
      r = { items: [], start: 0 };
      this.rings.set(tenant, r);
    }
    return r;
  }

  private shiftRing(r: Ring): void {
    r.start++;
    this.total--;
    if (r.start > LEDGER_RING_PER_TENANT) {
      r.items = r.items.slice(r.start);
      r.start = 0;
    }
  }

  private compactFifo(): void {
    this.fifo = this.fifo.slice(this.fifoHead).filter(([e, r]) => {
      const first = r.items[r.start];
      return first !== undefined && e.seq >= first.seq;
    });
    this.fifoHead = 0;
  }
}
