/**
 * A time-decayed event counter: `count` is roughly the events of the last
 * RATE_WINDOW_MS, so count / window is an events-per-second estimate (an EWMA
 * over irregular event times).
 */
export interface RateState {
  count: number;
  at: number;
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
