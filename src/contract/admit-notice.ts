import type { Admission } from '../scheduler/types';

/** The scheduler's admission of one attempt of a run, with its lease. */
export interface AdmitNotice {
  attempt: number;
  seq: number;
  admittedAt: number;
  leaseExpiresAt: number;
  /** Tokens reserved in the ledger for this attempt (absent from older schedulers). */
  reserved?: number;
}

/** What a run is told of its admission. */
export function admitNoticeOf(a: Admission): AdmitNotice {
  return {
    attempt: a.attempt,
    seq: a.seq,
    admittedAt: a.admittedAt,
    leaseExpiresAt: a.leaseExpiresAt,
    reserved: a.reserved,
  };
}

/**
 * How its offer started a run (decide, then start): with the admission the scheduler's answer carried,
 * or told to check on the scheduler at once (its unit was known before, so no admission may come).
 */
export interface RunStart {
  admission?: AdmitNotice;
  checkNow?: boolean;
}
