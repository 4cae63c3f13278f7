/**
 * A time-decayed event counter: `count` is roughly the events of the last
 * RATE_WINDOW_MS, so count / window is an events-per-second estimate (an EWMA
 * over irregular event times).
 */
export interface RateState {
  count: number;
  at: number;
  /** When the current run of events began: a young history is averaged over its own span, not the window. */
  since?: number;
}

export const RATE_WINDOW_MS = 30_000;

/*
 * The decay is tau/(tau+dt) rather than exp(-dt/tau): a rational function gives the
 * same numbers on every JavaScript engine, so replays and restores stay bit-exact.
 */
function decay(dtMs: number): number {
  return dtMs <= 0 ? 1 : RATE_WINDOW_MS / (RATE_WINDOW_MS + dtMs);
}

export function newRate(now: number): RateState {
  return { count: 0, at: now };
}

/** Records `n` events at `now`. */
export function recordEvents(r: RateState, now: number, n = 1): void {
  if (r.since === undefined || recentEvents(r, now) < 1e-3) r.since = now;
  if (now > r.at) {
    r.count *= decay(now - r.at);
    r.at = now;
  }
  r.count += n;
}

/** Decayed event count at `now` (pure). */
export function recentEvents(r: RateState, now: number): number {
  return r.count * decay(now - r.at);
}

/** Events per second at `now` (pure). */
export function ratePerSecond(r: RateState, now: number): number {
  return (recentEvents(r, now) * 1000) / RATE_WINDOW_MS;
}

/**
 * Events per second averaged over the history's own span when it is younger than the window:
 * right after a burst starts, dividing by the whole window would understate the rate many times
 * over (and overstate every Retry-After computed from it).
 */
export function currentRatePerSecond(r: RateState, now: number): number {
  const span =
    r.since === undefined ? RATE_WINDOW_MS : Math.min(RATE_WINDOW_MS, Math.max(1000, now - r.since));
  return (recentEvents(r, now) * 1000) / span;
}
