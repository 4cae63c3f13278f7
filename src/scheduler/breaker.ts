/**
 * The circuit breaker of the provider's key: when model calls fail the same way fleet-wide (the key
 * refused: 401, 403, a key-level quota; or a 5xx from every call), admission stops. After a backoff
 * the breaker is half-open and lets one unit through as a probe; a served call closes it, another
 * failure opens it again for twice the backoff (up to its cap). Pure: the governor owns the state.
 */
export interface BreakerState {
  /** `half_open` once a probe was let through; an `open` breaker past `probeAt` admits a probe too. */
  state: 'closed' | 'open' | 'half_open';
  reason: BreakerReason | null;
  /** When the breaker opened (the start of this episode), ms; null when closed. */
  since: number | null;
  /** No probe before this instant, ms (open: the end of the backoff; half-open: the next probe, if the last one tells nothing). */
  probeAt: number;
  backoffMs: number;
  /** Units let through as probes, and times the breaker opened, since the chain began. */
  probes: number;
  trips: number;
  /** Calls refused for the key, and calls answered 5xx, since the last served call (within STREAK_MS). */
  refused: number;
  errors: number;
  /** The latest failed call's report, ms. */
  failedAt: number;
}

/** `key_refused`: 401, 403 or a key-level quota (`insufficient_quota`, `billing_error`); `server_errors`: 5xx. */
export type BreakerReason = 'key_refused' | 'server_errors';

export interface BreakerParams {
  /** The first backoff before a probe, and its cap (each failed probe doubles it). */
  probeMinMs: number;
  probeMaxMs: number;
}

export const BREAKER_DEFAULTS: BreakerParams = { probeMinMs: 5_000, probeMaxMs: 60_000 };
/** Calls refused for the key, with no call served between them, that open the breaker. */
export const TRIP_REFUSALS = 3;
/** Calls answered 5xx, with no call served between them, that open the breaker. */
export const TRIP_SERVER_ERRORS = 10;
/** Failures further apart than this do not add up: the streak starts again. */
export const STREAK_MS = 60_000;

/** What a window of worker reports says about the key. */
export interface BreakerWindow {
  served: number;
  keyRefused: number;
  serverErrors: number;
}

/** Where admission stands: `all` as usual, `one` probe, or `none`. */
export type BreakerGate = 'all' | 'one' | 'none';

export interface BreakerStatus {
  state: BreakerState['state'];
  reason: BreakerReason | null;
  since: string | null;
  /** When the next probe may go; null when closed. */
  nextProbeAt: string | null;
  probes: number;
  trips: number;
}

export function newBreaker(now: number): BreakerState {
  return {
    state: 'closed',
    reason: null,
    since: null,
    probeAt: now,
    backoffMs: 0,
    probes: 0,
    trips: 0,
    refused: 0,
    errors: 0,
    failedAt: now,
  };
}

const count = (n: number): number => (Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

function openFor(b: BreakerState, p: BreakerParams, backoffMs: number, now: number): void {
  b.backoffMs = Math.min(p.probeMaxMs, Math.max(p.probeMinMs, backoffMs));
  b.probeAt = now + b.backoffMs;
}

/**
 * Folds one window of reports in. A served call closes the breaker (the key works); a window of
 * failures only adds to the streak, which opens a closed breaker at TRIP_REFUSALS refusals or
 * TRIP_SERVER_ERRORS 5xx, and opens a half-open one again at once, for twice the backoff.
 */
export function observeBreaker(b: BreakerState, p: BreakerParams, w: BreakerWindow, now: number): void {
  const [served, refused, errors] = [count(w.served), count(w.keyRefused), count(w.serverErrors)];
  if (served > 0) {
    Object.assign(b, { state: 'closed', reason: null, since: null, backoffMs: 0, refused: 0, errors: 0 });
    return;
  }
  if (refused + errors === 0) return;
  if (now - b.failedAt > STREAK_MS) [b.refused, b.errors] = [0, 0];
  b.refused += refused;
  b.errors += errors;
  b.failedAt = Math.max(b.failedAt, now);
  // A refused key outranks a failing server: fixing it is the operator's part.
  const reason: BreakerReason = refused > 0 || b.refused >= TRIP_REFUSALS ? 'key_refused' : 'server_errors';
  if (b.state === 'closed') {
    if (b.refused < TRIP_REFUSALS && b.errors < TRIP_SERVER_ERRORS) return;
    Object.assign(b, { state: 'open', reason, since: now, trips: b.trips + 1 });
    openFor(b, p, p.probeMinMs, now);
  } else if (b.state === 'half_open') {
    Object.assign(b, { state: 'open', reason });
    openFor(b, p, b.backoffMs * 2, now);
  } else if (refused > 0) b.reason = 'key_refused';
}

/** How many units admission may let through at `now` (pure). */
export function breakerGate(b: BreakerState | undefined, now: number): BreakerGate {
  if (!b || b.state === 'closed') return 'all';
  return now >= b.probeAt ? 'one' : 'none';
}

/** A probe unit was admitted: the breaker is half-open, and the next probe waits a backoff. */
export function probeSent(b: BreakerState, now: number): void {
  b.state = 'half_open';
  b.probes += 1;
  b.probeAt = now + b.backoffMs;
}

/** When the breaker next lets a unit through; null when it is closed (pure). */
export function breakerProbeAt(b: BreakerState | undefined): number | null {
  return !b || b.state === 'closed' ? null : b.probeAt;
}

/** The breaker as the scheduler's status shows it (pure). */
export function breakerStatus(b: BreakerState | undefined, now: number): BreakerStatus {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  if (!b) return { state: 'closed', reason: null, since: null, nextProbeAt: null, probes: 0, trips: 0 };
  const probing = b.state === 'open' && now >= b.probeAt;
  return {
    state: probing ? 'half_open' : b.state,
    reason: b.reason,
    since: iso(b.since),
    nextProbeAt: b.state === 'closed' ? null : iso(Math.max(now, b.probeAt)),
    probes: b.probes,
    trips: b.trips,
  };
}

/** Why queued work waits on the breaker, for `waitingOn`; null when it is closed (pure). */
export function breakerWait(b: BreakerState | undefined, now: number): string | null {
  if (!b || b.state === 'closed') return null;
  const what =
    b.reason === 'server_errors'
      ? 'The model provider answered every recent call with a server error (5xx)'
      : 'The model provider refused the API key (401/403 or its quota is exhausted)';
  const next = new Date(Math.max(now, b.probeAt)).toISOString();
  return `${what}; admission is paused and one unit goes through as a probe at ${next}; a served call resumes admission, running units wait.`;
}
