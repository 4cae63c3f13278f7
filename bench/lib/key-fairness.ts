/*
 * The checks of `npm run bench -- keys` (issue 47), over the order in which runs' first model calls
 * reached the simulator: pure, so the unit tests hold them to their bounds on made-up orders.
 */

/** Position of each run in `order` (first model calls, first arrival 0); absent runs are not there. */
export function rankOf(order: readonly string[]): Map<string, number> {
  return new Map(order.map((id, i) => [id, i] as const));
}

/**
 * Check 1's bound: whale runs that may start ahead of an end user's k-th run (k from 1), counted from
 * when every user's runs had arrived. Inside the tenant the keys take turns by tokens (equal costs:
 * one run a turn), so the whale takes at most k turns before a user's k-th; up to `slots` whale runs
 * were admitted but not yet at the simulator as the users arrived; and runs admitted in one window
 * of `slots` may reach the simulator in any order (slots − 1 more). One slot: k + 1, the integration
 * test's bound (test/integration/fairness-keys.test.ts).
 */
export function turnBound(k: number, slots: number): number {
  return k + 2 * slots - 1;
}

export interface TurnRun {
  user: string;
  /** 1 for a user's first run. */
  k: number;
  /** Whale runs started ahead of it, after those started before the users arrived. */
  whaleAhead: number;
  bound: number;
}

export interface TurnCheck {
  /** Whale runs at the simulator before every user had arrived (not counted against anyone). */
  whaleStartedBefore: number;
  /** The whale's runs still waiting when the users arrived: in arrival order every user waits behind them. */
  whaleBacklogAtArrival: number;
  runs: TurnRun[];
  /** The run with the most whale runs ahead beyond its turn (whaleAhead − k). */
  worst: TurnRun | undefined;
  /** Runs over their bound. */
  over: TurnRun[];
  /** The whale stayed backlogged through every user's turns: its backlog covered them. */
  backlogged: boolean;
  pass: boolean;
}

/**
 * Each user run's whale runs ahead against its bound. `users` maps a user to its run ids in
 * submission order; every user run must be in `order` (a whale run not there has not started).
 */
export function checkTurns(
  order: readonly string[],
  whale: readonly string[],
  users: ReadonlyMap<string, readonly string[]>,
  whaleStartedBefore: number,
  slots: number,
): TurnCheck {
  const rank = rankOf(order);
  const whaleRanks = whale
    .map((id) => rank.get(id))
    .filter((r): r is number => r !== undefined)
    .sort((a, b) => a - b);
  const below = (r: number): number => {
    let lo = 0;
    let hi = whaleRanks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (whaleRanks[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const runs: TurnRun[] = [];
  let perUser = 0;
  for (const [user, ids] of users) {
    perUser = Math.max(perUser, ids.length);
    ids.forEach((id, i) => {
      const r = rank.get(id);
      if (r === undefined) throw new Error(`${user}'s run ${i + 1} (${id}) made no model call`);
      runs.push({
        user,
        k: i + 1,
        whaleAhead: below(r) - whaleStartedBefore,
        bound: turnBound(i + 1, slots),
      });
    });
  }
  const worst = runs.reduce<TurnRun | undefined>(
    (w, x) => (w === undefined || x.whaleAhead - x.k > w.whaleAhead - w.k ? x : w),
    undefined,
  );
  const over = runs.filter((x) => x.whaleAhead > x.bound);
  const whaleBacklogAtArrival = whale.length - whaleStartedBefore;
  // The whale could have taken every turn of the users' runs: in arrival order it would have.
  const backlogged = whaleBacklogAtArrival >= turnBound(perUser, slots) + 1;
  return {
    whaleStartedBefore,
    whaleBacklogAtArrival,
    runs,
    worst,
    over,
    backlogged,
    pass: backlogged && over.length === 0,
  };
}

export interface ShareTenant {
  name: string;
  runs: readonly string[];
  /** Tokens a run costs the scheduler (its estimate); all of a tenant's runs alike. */
  cost: number;
}

export interface BackloggedShare {
  /** Ranks in `order` of the interval: from the first of these runs to the last while all were backlogged. */
  from: number;
  to: number;
  /** The tenant whose last run started first: where the interval ends. */
  endedBy: string;
  runs: Record<string, number>;
  tokens: Record<string, number>;
  /** Each tenant's share of the tokens started in the interval. */
  share: Record<string, number>;
}

/**
 * Each tenant's share of the tokens whose first model calls came while every tenant was backlogged:
 * from the first of their runs to start until the first tenant's last run started (after it, that
 * tenant has nothing queued). Every run must be in `order`.
 */
export function backloggedShare(order: readonly string[], tenants: readonly ShareTenant[]): BackloggedShare {
  const rank = rankOf(order);
  const ranksOf = tenants.map((t) =>
    t.runs.map((id) => {
      const r = rank.get(id);
      if (r === undefined) throw new Error(`${t.name}'s run ${id} made no model call`);
      return r;
    }),
  );
  const lasts = ranksOf.map((rs) => Math.max(...rs));
  const to = Math.min(...lasts);
  const from = Math.min(...ranksOf.map((rs) => Math.min(...rs)));
  const runs: Record<string, number> = {};
  const tokens: Record<string, number> = {};
  tenants.forEach((t, i) => {
    runs[t.name] = ranksOf[i]!.filter((r) => r <= to).length;
    tokens[t.name] = runs[t.name]! * t.cost;
  });
  const total = Object.values(tokens).reduce((a, b) => a + b, 0);
  const share = Object.fromEntries(tenants.map((t) => [t.name, tokens[t.name]! / total]));
  return { from, to, endedBy: tenants[lasts.indexOf(to)]!.name, runs, tokens, share };
}
