import { FleetScheduler, defaultTenantSettings } from '../../../src/scheduler';
import type { Admission, GovernorParams, ModelObservation } from '../../../src/scheduler';
import { fleetSettings } from './helpers';

/** A provider behind a gateway that strips rate-limit headers, and a workload offered to it. */
export interface WorldOptions {
  /** The provider's hidden limit, tokens per minute; its bucket holds a minute of it and starts full. */
  limit: number;
  /** Offered load as a multiple of the limit. */
  load: number;
  steps: number;
  tokensPerStep: number;
  stepMs: number;
  /** Queued units the door keeps; arrivals beyond it are shed. */
  maxQueued: number;
  concurrency: number;
  /** Workers report what they saw this often. */
  reportMs: number;
  seconds: number;
}

export const WORLD_DEFAULTS: WorldOptions = {
  limit: 120_000,
  load: 3,
  steps: 4,
  tokensPerStep: 150,
  stepMs: 500,
  maxQueued: 180,
  concurrency: 50,
  reportMs: 500,
  seconds: 80,
};

/** One second as the provider saw it. */
export interface WorldSecond {
  calls: number;
  throttled: number;
  tokens: number;
  governorTpm: number;
}

interface Running {
  a: Admission;
  step: number;
  /** When its next call goes. */
  at: number;
}

const TICK_MS = 50;

/**
 * Runs the fleet scheduler's policy core against the provider, tick by tick, as the workers do:
 * admitted units call once per step; a 429 is retried after the wait the provider states (in whole
 * seconds, as `llm_provider-retry-after` carries it); reports reach `observe` every `reportMs`.
 */
export function runWorld(governor: GovernorParams, over: Partial<WorldOptions> = {}): WorldSecond[] {
  const o = { ...WORLD_DEFAULTS, ...over };
  const t0 = Date.UTC(2025, 0, 15, 10, 0, 0);
  const s = FleetScheduler.create({ settings: fleetSettings({ concurrency: o.concurrency }), governor }, t0);
  s.upsertTenant('t', defaultTenantSettings({ maxInFlight: 10_000, maxQueued: o.maxQueued }), t0);
  const unitTokens = o.steps * o.tokensPerStep;
  const arrivalsPerMs = (o.load * o.limit) / unitTokens / 60_000;
  let level = o.limit;
  let arrivals = 0;
  let next = 0;
  let running: Running[] = [];
  let report: ModelObservation = blank(t0);
  let reportAt = t0 + o.reportMs;
  const seconds: WorldSecond[] = [];
  for (let now = t0; now < t0 + o.seconds * 1000; now += TICK_MS) {
    level = Math.min(o.limit, level + (TICK_MS * o.limit) / 60_000);
    arrivals += arrivalsPerMs * TICK_MS;
    const batch = [];
    for (; arrivals >= 1; arrivals--)
      batch.push({ runId: `u${next++}`, tenant: 't', priority: 'standard' as const, cost: unitTokens });
    if (batch.length > 0) s.submit(batch, now);
    for (const a of s.admit(now)) running.push({ a, step: 0, at: now });
    const sec = Math.floor((now - t0) / 1000);
    const second = (seconds[sec] ??= { calls: 0, throttled: 0, tokens: 0, governorTpm: 0 });
    const done: Admission[] = [];
    for (const r of running) {
      if (r.at > now) continue;
      second.calls++;
      report.calls++;
      if (level >= o.tokensPerStep) {
        level -= o.tokensPerStep;
        second.tokens += o.tokensPerStep;
        report.tokens += o.tokensPerStep;
        r.step++;
        r.at = now + o.stepMs;
        if (r.step === o.steps) done.push(r.a);
      } else {
        second.throttled++;
        report.throttled++;
        const waitMs = Math.ceil(((o.tokensPerStep - level) * 60_000) / o.limit / 1000) * 1000;
        report.maxRetryAfterMs = Math.max(report.maxRetryAfterMs, waitMs);
        report.retryUntil = Math.max(report.retryUntil ?? 0, now + waitMs);
        r.at = now + waitMs;
      }
    }
    if (done.length > 0) {
      running = running.filter((r) => r.step < o.steps);
      s.release(
        done.map((a) => ({
          runId: a.runId,
          attempt: a.attempt,
          usedTokens: unitTokens,
          outcome: 'completed' as const,
        })),
        now,
      );
    }
    if (now >= reportAt) {
      s.observe([{ ...report, at: now }], now);
      report = blank(now);
      reportAt = now + o.reportMs;
    }
    if ((now - t0) % 1000 === 0) second.governorTpm = s.status(now).governor.tokensPerMinute;
  }
  return seconds;
}

const blank = (at: number): ModelObservation => ({
  at,
  calls: 0,
  throttled: 0,
  tokens: 0,
  maxRetryAfterMs: 0,
});

/** Throttled share of the calls, and tokens served over the limit, from second `from` on. */
export function judge(
  seconds: readonly WorldSecond[],
  limit: number,
  from: number,
): { throttledShare: number; utilisation: number } {
  const tail = seconds.slice(from);
  const calls = tail.reduce((a, x) => a + x.calls, 0);
  const throttled = tail.reduce((a, x) => a + x.throttled, 0);
  const tokens = tail.reduce((a, x) => a + x.tokens, 0);
  return {
    throttledShare: calls > 0 ? throttled / calls : 0,
    utilisation: tokens / ((limit * tail.length) / 60),
  };
}
