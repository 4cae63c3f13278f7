/**
 * The quota storm's acceptance figures, computed from a per-second timeline. Shared by
 * `npm run bench -- storm`, its shortened integration test and the closed-loop unit test,
 * so the three judge the same way.
 */

/** One second of the storm (the interval ending at `t`). */
export interface StormSecond {
  /** Seconds since the load started, at the end of the interval. */
  t: number;
  /** Model calls answered in the interval, and how many of them were 429s. */
  calls: number;
  throttled: number;
  /** Tokens the provider served in the interval. */
  tokens: number;
  /** The provider's tokens-per-minute quota during the interval. */
  quotaTpm: number;
  /** Units admitted by the scheduler in the interval. */
  admitted: number;
}

export interface StormPhases {
  /** Seconds excluded from the first steady period (start-up). */
  warmup: number;
  cutAt: number;
  restoreAt: number;
  end: number;
}

export interface StormCriteria {
  /** Throttles are judged in windows of this many seconds. */
  windowSeconds: number;
  /** The cut's windows are judged from this many seconds after it. */
  settleSeconds: number;
  cutMaxThrottled: number;
  steadyMaxThrottled: number;
  minUtilisation: number;
  /** Throughput must reach `recoverShare` of the quota over a window ending within this many seconds of the restore. */
  recoverSeconds: number;
  recoverShare: number;
}

export const STORM_CRITERIA: StormCriteria = {
  windowSeconds: 10,
  settleSeconds: 30,
  cutMaxThrottled: 0.05,
  steadyMaxThrottled: 0.01,
  minUtilisation: 0.85,
  recoverSeconds: 30,
  recoverShare: 0.9,
};

export interface WindowFigures {
  from: number;
  to: number;
  calls: number;
  throttled: number;
  /** throttled / calls (0 without calls). */
  throttledShare: number;
  /** Served tokens over the quota's tokens in the window. */
  utilisation: number;
}

export interface StormVerdict {
  cutWindows: WindowFigures[];
  steady: WindowFigures[];
  /** Seconds from the restore to the end of the first window at `recoverShare` of the quota; null if none. */
  recoveredAfter: number | null;
  checks: StormCheck[];
  pass: boolean;
}

/**
 * One acceptance check. `throughput` marks a figure of what the machine sustains over time (quota
 * utilisation, time to recover): the bench judges it at full length on an otherwise idle machine; the
 * shortened test in `npm test`, which shares the machine with the rest of the suite, prints it and
 * judges the governor's behaviour only.
 */
export interface StormCheck {
  name: string;
  pass: boolean;
  detail: string;
  throughput?: true;
}

/** Sums the seconds in [from, to). */
export function windowOf(points: readonly StormSecond[], from: number, to: number): WindowFigures {
  let calls = 0;
  let throttled = 0;
  let tokens = 0;
  let quota = 0;
  for (const p of points) {
    if (p.t <= from || p.t > to) continue;
    calls += p.calls;
    throttled += p.throttled;
    tokens += p.tokens;
    quota += p.quotaTpm / 60;
  }
  return {
    from,
    to,
    calls,
    throttled,
    throttledShare: calls > 0 ? throttled / calls : 0,
    utilisation: quota > 0 ? tokens / quota : 0,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** Judges a timeline against the criteria. */
export function evaluateStorm(
  points: readonly StormSecond[],
  phases: StormPhases,
  c: StormCriteria = STORM_CRITERIA,
): StormVerdict {
  const w = c.windowSeconds;
  const cutWindows: WindowFigures[] = [];
  for (let from = phases.cutAt + c.settleSeconds; from < phases.restoreAt; from += w)
    cutWindows.push(windowOf(points, from, Math.min(from + w, phases.restoreAt)));

  const steady = [windowOf(points, phases.warmup, phases.cutAt)];
  if (phases.end - (phases.restoreAt + c.recoverSeconds) >= w)
    steady.push(windowOf(points, phases.restoreAt + c.recoverSeconds, phases.end));
  const steadyCalls = steady.reduce((a, x) => a + x.calls, 0);
  const steadyThrottled = steady.reduce((a, x) => a + x.throttled, 0);
  const steadyShare = steadyCalls > 0 ? steadyThrottled / steadyCalls : 0;

  let recoveredAfter: number | null = null;
  for (let from = phases.restoreAt; from + w <= phases.end; from++) {
    if (windowOf(points, from, from + w).utilisation >= c.recoverShare) {
      recoveredAfter = from + w - phases.restoreAt;
      break;
    }
  }

  const worstCut = Math.max(0, ...cutWindows.map((x) => x.throttledShare));
  const checks: StormCheck[] = [
    {
      name: `throttled calls ≤ ${pct(c.cutMaxThrottled)} in each ${w}-s window from ${c.settleSeconds} s after the cut`,
      pass: cutWindows.length > 0 && cutWindows.every((x) => x.throttledShare <= c.cutMaxThrottled),
      detail: cutWindows.map((x) => `${x.throttled}/${x.calls}`).join(', ') + ` (worst ${pct(worstCut)})`,
    },
    {
      name: `throttled calls ≤ ${pct(c.steadyMaxThrottled)} at steady state`,
      pass: steadyCalls > 0 && steadyShare <= c.steadyMaxThrottled,
      detail: `${steadyThrottled}/${steadyCalls} = ${pct(steadyShare)}`,
    },
    {
      name: `quota utilisation ≥ ${pct(c.minUtilisation)} at steady state`,
      pass: steady.every((x) => x.utilisation >= c.minUtilisation),
      detail: steady.map((x) => `${x.from}–${x.to} s: ${pct(x.utilisation)}`).join(', '),
      throughput: true as const,
    },
    {
      name: `throughput back to ≥ ${pct(c.recoverShare)} of the quota within ${c.recoverSeconds} s of the restore`,
      pass: recoveredAfter !== null && recoveredAfter <= c.recoverSeconds,
      detail: recoveredAfter === null ? 'never' : `after ${recoveredAfter} s`,
      throughput: true as const,
    },
  ];
  return { cutWindows, steady, recoveredAfter, checks, pass: checks.every((x) => x.pass) };
}
