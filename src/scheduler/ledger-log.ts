import { LEDGER_RING_PER_TENANT, Ring } from './ledger-ring';
import type { LedgerEntry } from './types';

export { LEDGER_RING_PER_TENANT };

type Kind = LedgerEntry['kind'];

/**
 * Entries kept fleet-wide. A cap as well: the log travels in the continue-as-new input, which
 * Temporal caps at 2 MiB, so a thousand tenants may not keep 200 entries each.
 * Beyond it the oldest entry of the whole fleet goes first.
 */
export const LEDGER_RING_TOTAL = 4_000;

/** Compact entry: [seq, at ms, kind code, tokens, runId]. */
export type EntryTuple = [number, number, string, number, string];
export interface LedgerLogSnapshot {
  next: number;
  rings: [string, EntryTuple[]][];
}

const CODE: Record<Kind, string> = {
  reserve: 'r',
  settle: 's',
  release: 'l',
  expire: 'e',
  rollover: 'o',
  charge: 'c',
  topup: 't',
};
const KIND: Record<string, Kind> = Object.fromEntries(
  Object.entries(CODE).map(([kind, code]) => [code, kind as Kind]),
);

/** Bounded per-tenant rings of ledger movements, most recent kept. */
export class LedgerLog {
  private readonly rings = new Map<string, Ring>();
  /** Fleet-wide order of appends (ring, seq); entries already dropped by their ring are skipped. */
  private fifoRing: Ring[] = [];
  private fifoSeq: number[] = [];
  private fifoHead = 0;
  private total = 0;
  private next = 1;

  append(tenant: string, at: number, runId: string, kind: Kind, tokens: number): void {
    const r = this.ring(tenant);
    if (r.size === LEDGER_RING_PER_TENANT) {
      r.dropOldest();
      this.total--;
    }
    const seq = this.next++;
    r.push(seq, at, runId, kind, tokens);
    this.fifoRing.push(r);
    this.fifoSeq.push(seq);
    this.total++;
    while (this.total > LEDGER_RING_TOTAL) {
      const victim = this.fifoRing[this.fifoHead] as Ring;
      const seq = this.fifoSeq[this.fifoHead++] as number;
      if (victim.size > 0 && victim.seq[victim.head] === seq) {
        victim.dropOldest();
        this.total--;
      }
    }
    const pending = this.fifoRing.length - this.fifoHead;
    if (pending > 2 * this.total + 1024 || (this.fifoHead > 4096 && this.fifoHead > pending))
      this.compactFifo();
  }

  /** Most recent first. */
  entries(tenant: string, limit: number): LedgerEntry[] {
    const r = this.rings.get(tenant);
    const out: LedgerEntry[] = [];
    for (let k = (r?.size ?? 0) - 1; r && k >= 0 && out.length < limit; k--) {
      const i = r.slot(k);
      out.push({
        at: new Date(r.at[i] as number).toISOString(),
        tenant,
        runId: r.runId[i] as string,
        kind: r.kind[i] as Kind,
        tokens: r.tokens[i] as number,
      });
    }
    return out;
  }

  snapshot(): LedgerLogSnapshot {
    const rings: [string, EntryTuple[]][] = [];
    for (const [tenant, r] of this.rings) {
      if (r.size === 0) continue;
      const tuples: EntryTuple[] = [];
      for (let k = 0; k < r.size; k++) {
        const i = r.slot(k);
        tuples.push([
          r.seq[i] as number,
          r.at[i] as number,
          CODE[r.kind[i] as Kind],
          r.tokens[i] as number,
          r.runId[i] as string,
        ]);
      }
      rings.push([tenant, tuples]);
    }
    return { next: this.next, rings };
  }

  static restore(s: LedgerLogSnapshot): LedgerLog {
    const log = new LedgerLog();
    log.next = s.next;
    const order: [number, Ring][] = [];
    for (const [tenant, tuples] of s.rings) {
      const ring = log.ring(tenant);
      for (const [seq, at, code, tokens, runId] of tuples.slice(-LEDGER_RING_PER_TENANT)) {
        ring.push(seq, at, runId, KIND[code] ?? 'reserve', tokens);
        order.push([seq, ring]);
        log.total++;
      }
    }
    order.sort((x, y) => x[0] - y[0]);
    log.fifoSeq = order.map((o) => o[0]);
    log.fifoRing = order.map((o) => o[1]);
    return log;
  }

  private ring(tenant: string): Ring {
    let r = this.rings.get(tenant);
    if (!r) {
      r = new Ring();
      this.rings.set(tenant, r);
    }
    return r;
  }

  /** Drops fifo records of entries their ring already dropped (an entry is live iff its seq ≥ its ring's oldest). */
  private compactFifo(): void {
    const rings: Ring[] = [];
    const seqs: number[] = [];
    for (let k = this.fifoHead; k < this.fifoRing.length; k++) {
      const r = this.fifoRing[k] as Ring;
      const seq = this.fifoSeq[k] as number;
      if (r.size > 0 && seq >= (r.seq[r.head] as number)) {
        rings.push(r);
        seqs.push(seq);
      }
    }
    this.fifoRing = rings;
    this.fifoSeq = seqs;
    this.fifoHead = 0;
  }
}
