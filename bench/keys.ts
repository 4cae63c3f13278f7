import { flags, startBenchStack, writeResult } from './lib/bench-stack';
import type { BenchStack } from './lib/bench-stack';
import { backloggedShare, checkTurns, turnBound } from './lib/key-fairness';
import type { BackloggedShare, TurnCheck } from './lib/key-fairness';
import { createProgress } from './lib/progress';
import { mapLimit } from '../src/util/map-limit';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** No provider limit in the way: the order of first calls is the scheduler's. */
const UNLIMITED = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000', FLEET_INTERACTIVE_RESERVE: '0' };

/** The estimate of a one-step synthetic run of `tokens` (31 at least: `STEP_PROMPT_ALLOWANCE`). */
const input = (tokens: number, stepMs: number) => ({ steps: 1, tokensPerStep: tokens, stepMs });

interface Opts {
  whale: number;
  users: number;
  perUser: number;
  keys: number;
  /** Check 1's slots: one, as the integration test, makes its turns exact. */
  slots: number;
  /** Check 2's slots. */
  shareSlots: number;
  /** Check 2: the second tenant's tokens against the whale's (more, so the whale's tenant ends the interval). */
  second: number;
  stepMs: number;
  /** Submissions in flight at once. */
  parallel: number;
  tolerance: number;
}

/** Submits one run per key in `keys` (in order, `parallel` at a time); their run ids. */
async function submit(
  s: BenchStack,
  token: string,
  keys: readonly (string | undefined)[],
  body: Record<string, unknown>,
  parallel: number,
): Promise<string[]> {
  return mapLimit([...keys], parallel, async (fairnessKey) => {
    const r = await s.call('POST', '/v1/runs', { agent: s.agent, ...body, fairnessKey }, token);
    if (r.status !== 202) throw new Error(`submit (${fairnessKey}): ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.runId as string;
  });
}

/** Waits until every one of `runIds` has made its first model call (progress shown as `label`). */
async function firstCalls(s: BenchStack, runIds: readonly string[], label: string): Promise<void> {
  const log = s.sim!.state.firstCalls;
  const bar = createProgress(label, runIds.length, { unit: 'runs' });
  const deadline = Date.now() + 60 * 60_000;
  for (;;) {
    const started = runIds.filter((id) => log.get(id) !== undefined).length;
    bar.update(started);
    if (started === runIds.length) break;
    if (Date.now() > deadline)
      throw new Error(`${label}: ${runIds.length - started} runs made no call in 1 h`);
    await pause(250);
  }
  bar.finish();
}

/**
 * Check 1: the whale's runs queued first, then each end user's, a round at a time; each user's k-th
 * run must start with at most `turnBound(k, slots)` whale runs ahead of it (counted from when every
 * user had arrived).
 */
async function turns(f: Opts): Promise<TurnCheck & { seconds: number; lastUserStartMs: number }> {
  const s = await startBenchStack({ FLEET_CONCURRENCY: String(f.slots), ...UNLIMITED });
  try {
    const total = f.whale + f.users * f.perUser;
    const token = await s.tenant('app', { maxQueued: total + 10, maxInFlight: Math.max(10, f.slots) });
    const body = { input: input(10, f.stepMs) };
    const t0 = Date.now();
    const whale = await submit(s, token, Array(f.whale).fill('whale'), body, f.parallel);
    const users = new Map(Array.from({ length: f.users }, (_, u) => [`user-${u}`, [] as string[]]));
    for (let k = 0; k < f.perUser; k++) {
      const ids = await submit(s, token, [...users.keys()], body, f.parallel);
      [...users.values()].forEach((mine, u) => mine.push(ids[u]!));
    }
    const arrived = Date.now();
    const log = s.sim!.state.firstCalls;
    const before = whale.filter((id) => (log.get(id) ?? Infinity) <= arrived).length;
    const userRuns = [...users.values()].flat();
    await firstCalls(s, userRuns, `keys: ${f.users} users' runs behind the whale`);
    const check = checkTurns(log.arrivals(), whale, users, before, f.slots);
    const lastUserStartMs = Math.max(...userRuns.map((id) => log.get(id)!)) - arrived;
    return { ...check, seconds: (Date.now() - t0) / 1000, lastUserStartMs };
  } finally {
    await s.stop();
  }
}

/**
 * Check 2, one variant: intake held, the whale's tenant queues its runs over `keys` keys and a second
 * tenant twice-as-large runs worth `second` × the whale's tokens; resumed, each tenant's share of the
 * tokens started while both were backlogged.
 */
async function share(s: BenchStack, f: Opts, keys: number): Promise<BackloggedShare & { seconds: number }> {
  const name = `whale-${keys}`;
  const costA = 40;
  const costB = 80;
  const bRuns = Math.ceil((f.whale * f.second * costA) / costB);
  const a = await s.tenant(name, { maxQueued: f.whale + 10, maxInFlight: f.shareSlots });
  const b = await s.tenant(`second-${keys}`, { maxQueued: bRuns + 10, maxInFlight: f.shareSlots });
  const held = await s.call('POST', '/v1/admin/drain', { intake: 'hold' });
  if (held.status !== 200) throw new Error(`drain: ${held.status} ${JSON.stringify(held.body)}`);
  const aKeys = Array.from({ length: f.whale }, (_, i) => (keys === 1 ? 'whale' : `whale-${i % keys}`));
  // Interleaved submission: neither tenant's backlog is complete long before the other's.
  const [aRuns, bRuns_] = await Promise.all([
    submit(s, a, aKeys, { input: input(costA, f.stepMs) }, Math.ceil(f.parallel / 2)),
    submit(s, b, Array(bRuns).fill(undefined), { input: input(costB, f.stepMs) }, Math.ceil(f.parallel / 2)),
  ]);
  const t0 = Date.now();
  const resumed = await s.call('POST', '/v1/admin/resume');
  if (resumed.status !== 200) throw new Error(`resume: ${resumed.status} ${JSON.stringify(resumed.body)}`);
  await firstCalls(
    s,
    [...aRuns, ...bRuns_],
    `keys: the whale on ${keys} key${keys === 1 ? '' : 's'} vs a second tenant`,
  );
  const r = backloggedShare(s.sim!.state.firstCalls.arrivals(), [
    { name, runs: aRuns, cost: costA },
    { name: `second-${keys}`, runs: bRuns_, cost: costB },
  ]);
  return { ...r, seconds: (Date.now() - t0) / 1000 };
}

async function shares(f: Opts) {
  const s = await startBenchStack({ FLEET_CONCURRENCY: String(f.shareSlots), ...UNLIMITED });
  try {
    const oneKey = await share(s, f, 1);
    const spread = await share(s, f, f.keys);
    const whaleShare = (r: BackloggedShare) => Object.values(r.share)[0]!;
    const difference = whaleShare(spread) - whaleShare(oneKey);
    return { oneKey, spread, difference, pass: Math.abs(difference) <= f.tolerance };
  } finally {
    await s.stop();
  }
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/**
 * `npm run bench -- keys [--whale 1000 --users 20 --perUser 5 --keys 500 --slots 1 --shareSlots 10
 * --second 1.5 --stepMs 100 --parallel 20 --tolerance 0.05]`: issue 47's full-size checks of fairness
 * keys inside a tenant, on a real dev server, measured at the simulator's first model call per run.
 * (1) One end user ("whale") queues `whale` runs, then `users` other end users `perUser` each: each
 * user's k-th run starts with at most `turnBound(k, slots)` of the whale's runs ahead of it.
 * (2) The whale's tenant against a second tenant, both backlogged: its share of the tokens started
 * with its runs over `keys` keys differs from its share with them on one key by at most `tolerance`.
 */
export async function runKeysBench(argv: string[]): Promise<void> {
  const f = flags(argv, {
    whale: 1000,
    users: 20,
    perUser: 5,
    keys: 500,
    slots: 1,
    shareSlots: 10,
    second: 1.5,
    stepMs: 100,
    parallel: 20,
    tolerance: 0.05,
  });
  const t = await turns(f);
  const w = t.worst;
  console.log(
    `keys (1): ${f.whale} whale runs, ${f.users} users × ${f.perUser}, ${f.slots} slot(s): ${t.whaleStartedBefore} whale runs ` +
      `started before the users had arrived, ${t.whaleBacklogAtArrival} still queued (in arrival order every user's run waits ` +
      `behind them); bound: a user's k-th run starts with at most k + ${turnBound(0, f.slots)} whale runs ahead; ` +
      `worst ${w ? `${w.user}'s run ${w.k}: ${w.whaleAhead} ahead (bound ${w.bound})` : '?'}; ${t.over.length} of ` +
      `${t.runs.length} over; the users' last run started ${(t.lastUserStartMs / 1000).toFixed(1)} s after they arrived → ` +
      `${t.pass ? 'PASS' : 'FAIL'}`,
  );
  const sh = await shares(f);
  const line = (r: BackloggedShare) =>
    Object.keys(r.share)
      .map((n) => `${n} ${pct(r.share[n]!)} (${r.runs[n]} runs, ${r.tokens[n]} tokens)`)
      .join(', ') + ` over first calls ${r.from}..${r.to} (ended by ${r.endedBy}'s last)`;
  console.log(
    `keys (2): while both tenants were backlogged, one key: ${line(sh.oneKey)}; ${f.keys} keys: ${line(sh.spread)}; ` +
      `the whale's share moved by ${(100 * sh.difference).toFixed(1)} points (bound ±${(100 * f.tolerance).toFixed(0)}) → ` +
      `${sh.pass ? 'PASS' : 'FAIL'}`,
  );
  const pass = t.pass && sh.pass;
  const result = { ...f, pass, turns: t, shares: sh };
  console.log(`wrote ${writeResult('keys', result)}`);
  if (!pass) process.exitCode = 1;
}
