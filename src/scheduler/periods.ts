import type { BudgetPeriod } from './types';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Start (ms) of the UTC calendar period containing `t`; for 'none', `t` itself (the ledger's creation). */
export function periodStartOf(period: BudgetPeriod, t: number): number {
  switch (period) {
    case 'hour':
      return Math.floor(t / HOUR_MS) * HOUR_MS;
    case 'day':
      return Math.floor(t / DAY_MS) * DAY_MS;
    case 'month': {
      const d = new Date(t);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    }
    case 'none':
      return t;
  }
}

/** End (exclusive, ms) of the period that starts at `start`; null for 'none', which never rolls over. */
export function periodEndOf(period: BudgetPeriod, start: number): number | null {
  switch (period) {
    case 'hour':
      return start + HOUR_MS;
    case 'day':
      return start + DAY_MS;
    case 'month': {
      const d = new Date(start);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
    case 'none':
      return null;
  }
}
