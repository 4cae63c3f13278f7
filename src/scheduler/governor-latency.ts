import type { GovernorParams } from './types';

/**
 * The latency signal: a provider or gateway that queues calls instead of refusing them shows up as
 * served calls taking longer. Two measures of served calls are kept, ms per call and ms per token:
 * a recent one (decayed over RECENT_MS) and a baseline (the recent one's low: it falls to it at
 * once and rises towards it only over BASELINE_RISE_MS). Latency is elevated when both recent
 * measures exceed `latencyFactor` × their baselines (and by MIN_EXCESS_MS at least): longer
 * completions raise ms per call but not per token, shorter ones raise ms per token but not per
 * call, while a queue in front of the provider raises both. Pure.
 */
export interface LatencyState {
  /** Decayed sums of served calls timed, their ms and their tokens, as of `at`. */
  at: number;
  calls: number;
  ms: number;
  tokens: number;
  /** Timed calls seen in all, until the baseline is set (then no longer counted). */
  seen: number;
  /** Baseline ms per call and per token; null until BASELINE_CALLS calls were timed. */
  baselineMs: number | null;
  baselinePace: number | null;
  /** Since when latency has been elevated; null while it is not. */
  since: number | null;
}

/** One report window's timed calls: how many, their summed latency (ms) and their served tokens. */
export interface LatencySample {
  calls: number;
  ms: number;
  tokens: number;
}

const RECENT_MS = 5000;
/** The baseline rises towards recent latency with this time constant: a lasting change is absorbed in minutes. */
const BASELINE_RISE_MS = 300_000;
/** Timed calls before the baseline is trusted. */
const BASELINE_CALLS = 10;
/** Latency within this many ms of the baseline is never congestion (jitter on a fast provider). */
export const MIN_EXCESS_MS = 100;

export function newLatency(now: number): LatencyState {
  return { at: now, calls: 0, ms: 0, tokens: 0, seen: 0, baselineMs: null, baselinePace: null, since: null };
}

/** Whether the chain watches latency: it was begun with a `latencyFactor` above 1. */
export function watchesLatency(p: Pick<GovernorParams, 'latencyFactor'>): boolean {
  return p.latencyFactor !== undefined && p.latencyFactor > 1;
}

function decay(l: LatencyState, now: number): void {
  if (now <= l.at) return;
  const f = RECENT_MS / (RECENT_MS + now - l.at);
  l.calls *= f;
  l.ms *= f;
  l.tokens *= f;
  l.at = now;
}

/** Recent ms per call and per token; null before any timed call (pure). */
export function recentLatency(l: LatencyState): { ms: number; pace: number } | null {
  if (!(l.calls > 0)) return null;
  return { ms: l.ms / l.calls, pace: l.tokens > 0 ? l.ms / l.tokens : l.ms / l.calls };
}

/** Adds a window's timed calls, moves the baseline and updates `since`. */
export function observeLatency(l: LatencyState, p: GovernorParams, s: LatencySample, now: number): void {
  if (!(s.calls > 0) || !(s.ms >= 0) || !(s.tokens >= 0)) return;
  const dt = Math.max(0, now - l.at);
  decay(l, now);
  l.calls += s.calls;
  l.ms += s.ms;
  l.tokens += s.tokens;
  const recent = recentLatency(l);
  if (recent === null) return;
  if (l.baselineMs === null || l.baselinePace === null) {
    l.seen += s.calls;
    if (l.seen >= BASELINE_CALLS) [l.baselineMs, l.baselinePace] = [recent.ms, recent.pace];
    return;
  }
  const rise = dt / (BASELINE_RISE_MS + dt);
  l.baselineMs = follow(l.baselineMs, recent.ms, rise);
  l.baselinePace = follow(l.baselinePace, recent.pace, rise);
  if (!elevated(l, p, recent)) l.since = null;
  else l.since ??= now;
}

/** Down to `seen` at once, up towards it by `rise` of the gap. */
const follow = (base: number, seen: number, rise: number): number =>
  seen <= base ? seen : base + (seen - base) * rise;

function elevated(l: LatencyState, p: GovernorParams, recent: { ms: number; pace: number }): boolean {
  if (l.baselineMs === null || l.baselinePace === null || !watchesLatency(p)) return false;
  const k = p.latencyFactor ?? Infinity;
  return (
    recent.ms > k * l.baselineMs &&
    recent.ms - l.baselineMs > MIN_EXCESS_MS &&
    recent.pace > k * l.baselinePace
  );
}

/** Latency elevated now (as of the last report), sustained or not (pure). */
export function latencyElevated(l: LatencyState | undefined): boolean {
  return l !== undefined && l.since !== null;
}

/** Latency elevated for `latencySustainMs` or longer: the provider is queueing (pure). */
export function congested(l: LatencyState | undefined, p: GovernorParams, now: number): boolean {
  return (
    l !== undefined && l.since !== null && watchesLatency(p) && now - l.since >= (p.latencySustainMs ?? 0)
  );
}
