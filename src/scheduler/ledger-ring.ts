import type { LedgerEntry } from './types';

type Kind = LedgerEntry['kind'];

/** Entries kept per tenant. */
export const LEDGER_RING_PER_TENANT = 200;

/** A tenant's entries as a circular buffer of parallel arrays: no allocation per entry. */
export class Ring {
  readonly seq: number[] = [];
  readonly at: number[] = [];
  readonly runId: string[] = [];
  readonly kind: Kind[] = [];
  readonly tokens: number[] = [];
  /** Slot of the oldest entry, and how many are kept. */
  head = 0;
  size = 0;

  push(seq: number, at: number, runId: string, kind: Kind, tokens: number): void {
    const i = (this.head + this.size) % LEDGER_RING_PER_TENANT;
    this.seq[i] = seq;
    this.at[i] = at;
    this.runId[i] = runId;
    this.kind[i] = kind;
    this.tokens[i] = tokens;
    this.size++;
  }

  /** Slot of the k-th oldest entry. */
  slot(k: number): number {
    return (this.head + k) % LEDGER_RING_PER_TENANT;
  }

  dropOldest(): void {
    this.head = (this.head + 1) % LEDGER_RING_PER_TENANT;
    this.size--;
  }
}
