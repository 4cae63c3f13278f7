import { evaluateStorm } from './storm-eval';
import type { StormCheck, StormCriteria, StormPhases, StormSecond, StormVerdict } from './storm-eval';

/** Real HTTP against the stack's API (admin token unless `token`). */
export type ApiCall = (
  method: string,
  route: string,
  body?: unknown,
  token?: string,
) => Promise<{ status: number; body: any; headers: Headers }>;

export interface StormOptions {
  /** The provider's quota, tokens per minute; cut to `cutShare` of it between cutAt and restoreAt. */
  tpm: number;
  cutShare: number;
  phases: StormPhases;
  /** Offered load as a multiple of the quota (in estimated tokens). */
  load: number;
  steps: number;
  tokensPerStep: number;
  stepMs: number;
  tenants: number;
  maxQueued: number;
  /** Each unit's estimate as a share of what it really spends (default 1: exact estimates). */
  estimateShare?: number;
  /** Gives up waiting for the backlog to finish after this many seconds past the end. */
  drainSeconds: number;
  /** The agent the runs use (default `synthetic`; the benchmark's `--agents user` runs its user-code copy). */
  agent?: string;
  criteria?: StormCriteria;
}

/** One second of the storm as the bench sees it: the judged figures plus the scheduler's picture. */
export interface StormSample extends StormSecond {
  /** Submissions answered 202, and shed at the door (429) in the interval. */
  accepted: number;
  shed: number;
  completed: number;
  concurrencyLimit: number;
  governorTpm: number;
  inFlight: number;
  queued: number;
  /** How long the scheduler's status query had been pending when the second was sampled (0: answered). */
  statusAgeMs: number;
}

export interface StormResult {
  options: StormOptions;
  seconds: StormSample[];
  verdict: StormVerdict;
  totals: {
    accepted: number;
    shed: number;
    /** Door answers other than 202 and 429 queue_full, by status and code. */
    otherAnswers: Record<string, number>;
    completed: number;
    failed: number;
    failedRuns: { runId: string; code: string; message: string }[];
    earlyRetries: number;
    calls: number;
    throttled: number;
    continuedAsNew: number;
  };
  retryAfter: { min: number; median: number; max: number; count: number };
  /** Scheduler status queries that took over 2 s: the second they were asked in, and how long. */
  slowStatus: { t: number; ms: number }[];
  /** Every check, the storm's and the run-level ones. */
  checks: StormCheck[];
  pass: boolean;
}

interface SimStats {
  calls: number;
  throttled: number;
  tokens: number;
  earlyRetries: number;
  quota: { tpm: number; rpm: number };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function simJson<T>(simUrl: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${simUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`simulator ${path}: ${res.status}`);
  return (await res.json()) as T;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * Drives a quota storm through a running stack, over real HTTP: tenants submit synthetic runs at
 * `load` × the quota (open loop, evenly spaced), the simulator's quota is cut and restored on
 * schedule, and every second the simulator's counters and the scheduler's status are sampled.
 * After the load stops, waits for every accepted run to finish and judges the result.
 */
export async function runStorm(
  api: ApiCall,
  simUrl: string,
  o: StormOptions,
  log: (line: string) => void = () => {},
  /** Seconds of the storm done (progress reporting). */
  onSecond: (t: number) => void = () => {},
  /** Each storm tenant as it is created, with its API key (kept out of the result). */
  onTenant: (tenant: string, apiKey: string) => void = () => {},
): Promise<StormResult> {
  const prefix = `storm-${Date.now().toString(36)}`;
  const keys: string[] = [];
  for (let i = 0; i < o.tenants; i++) {
    const r = await api('PUT', `/v1/admin/tenants/${prefix}-${i}`, {
      maxQueued: o.maxQueued,
      maxInFlight: 1000,
    });
    if (r.status !== 201) throw new Error(`tenant: ${r.status} ${JSON.stringify(r.body)}`);
    keys.push(r.body.apiKey as string);
    onTenant(`${prefix}-${i}`, r.body.apiKey as string);
  }
  const unitTokens = o.steps * o.tokensPerStep;
  const perSecond = (o.load * o.tpm) / 60 / unitTokens;
  const input = { steps: o.steps, tokensPerStep: o.tokensPerStep, stepMs: o.stepMs };
  const body = {
    agent: o.agent ?? 'synthetic',
    input,
    ...(o.estimateShare !== undefined && o.estimateShare !== 1
      ? { estimatedTokens: Math.max(1, Math.round(unitTokens * o.estimateShare)) }
      : {}),
  };

  const door = { accepted: 0, shed: 0, other: {} as Record<string, number> };
  const retryAfters: number[] = [];
  const inflightRequests = new Set<Promise<void>>();
  const submit = (i: number): void => {
    const p = api('POST', '/v1/runs', body, keys[i % keys.length])
      .then((r) => {
        if (r.status === 202) door.accepted++;
        else if (r.status === 429 && r.body?.error?.code === 'queue_full') {
          door.shed++;
          retryAfters.push(Number(r.headers.get('retry-after')));
        } else {
          const k = `${r.status} ${r.body?.error?.code ?? ''}`.trim();
          door.other[k] = (door.other[k] ?? 0) + 1;
        }
      })
      .catch((err: unknown) => {
        const k = `error ${(err as Error).message}`;
        door.other[k] = (door.other[k] ?? 0) + 1;
      })
      .finally(() => inflightRequests.delete(p));
    inflightRequests.add(p);
  };

  const status = async () => {
    for (;;) {
      const r = await api('GET', '/v1/admin/scheduler');
      if (r.status === 200 && r.body?.counters) return r.body;
      await pause(100);
    }
  };

  const t0 = Date.now();
  const { phases } = o;
  let submitted = 0;
  let stopLoad = false;
  const loader = (async () => {
    while (!stopLoad) {
      const due = Math.floor(((Date.now() - t0) / 1000) * perSecond);
      while (submitted < due) submit(submitted++);
      await pause(20);
    }
  })();

  const seconds: StormSample[] = [];
  let prevSim = await simJson<SimStats>(simUrl, '/admin/stats');
  let prevStatus = await status();
  let prevDoor = { ...door };
  let cut = false;
  let restored = false;
  // The scheduler's status is a query, and a query waits while the scheduler's workflow task runs:
  // a slow one must not stall the clock. The simulator (where the work happens) is sampled every
  // second on time, the quota changes land on time, and the scheduler's figures come from its
  // newest answer, at most one query in flight (a late answer's admissions count in the second it arrives).
  let latest = prevStatus;
  let asked = 0;
  let pendingStatus: Promise<void> | undefined;
  const slowStatus: { t: number; ms: number }[] = [];
  const refreshStatus = (t: number): Promise<void> => {
    if (!pendingStatus) {
      asked = Date.now();
      pendingStatus = status()
        .then((v) => {
          latest = v;
          const ms = Date.now() - asked;
          if (ms > 2000) slowStatus.push({ t, ms });
        })
        .finally(() => (pendingStatus = undefined));
    }
    return pendingStatus;
  };
  for (let k = 1; ; k++) {
    const t = k;
    await pause(Math.max(0, t0 + t * 1000 - Date.now()));
    const sim = await simJson<SimStats>(simUrl, '/admin/stats');
    const doorNow = { ...door };
    // Up to 300 ms for a fresh answer; otherwise the newest one so far.
    await Promise.race([refreshStatus(t), pause(300)]);
    const st = latest;
    const sample: StormSample = {
      t,
      calls: sim.calls - prevSim.calls,
      throttled: sim.throttled - prevSim.throttled,
      tokens: sim.tokens - prevSim.tokens,
      quotaTpm: prevSim.quota.tpm,
      admitted: st.counters.admitted - prevStatus.counters.admitted,
      accepted: doorNow.accepted - prevDoor.accepted,
      shed: doorNow.shed - prevDoor.shed,
      completed: st.counters.completed - prevStatus.counters.completed,
      concurrencyLimit: Math.min(st.config.concurrency, st.governor.concurrencyLimit),
      governorTpm: st.governor.tokensPerMinute,
      inFlight: st.inFlight,
      queued: st.queued.total,
      statusAgeMs: pendingStatus ? Date.now() - asked : 0,
    };
    seconds.push(sample);
    onSecond(t);
    [prevSim, prevStatus, prevDoor] = [sim, st, doorNow];
    log(
      `t=${String(t).padStart(3)}s quota=${sample.quotaTpm} calls=${sample.calls} throttled=${sample.throttled}` +
        ` served=${sample.tokens * 60}/min admitted=${sample.admitted}/s accepted=${sample.accepted} shed=${sample.shed}` +
        ` governor: limit=${sample.concurrencyLimit} tpm=${sample.governorTpm} inFlight=${sample.inFlight} queued=${sample.queued}` +
        (sample.statusAgeMs > 0 ? ` (scheduler status pending ${sample.statusAgeMs} ms)` : ''),
    );
    // Quota changes land right after a sample, so each sampled second has one quota.
    if (!cut && t >= phases.cutAt) {
      await simJson(simUrl, '/admin/capacity', { tpm: Math.round(o.tpm * o.cutShare) });
      prevSim = await simJson<SimStats>(simUrl, '/admin/stats');
      cut = true;
      log(`--- quota cut to ${Math.round(o.tpm * o.cutShare)} tokens/min`);
    }
    if (!restored && t >= phases.restoreAt) {
      await simJson(simUrl, '/admin/capacity', { tpm: o.tpm });
      prevSim = await simJson<SimStats>(simUrl, '/admin/stats');
      restored = true;
      log(`--- quota restored to ${o.tpm} tokens/min`);
    }
    if (t >= phases.end) break;
  }
  stopLoad = true;
  await loader;
  await pendingStatus;
  await Promise.all([...inflightRequests]);

  // The backlog finishes at the quota's pace; every accepted run must complete.
  const deadline = Date.now() + o.drainSeconds * 1000;
  let st = await status();
  const finished = (s: typeof st) => s.queued.total === 0 && s.inFlight === 0;
  while (!finished(st) && Date.now() < deadline) {
    await pause(1000);
    st = await status();
  }
  const sim = await simJson<SimStats>(simUrl, '/admin/stats');
  const failedRuns: StormResult['totals']['failedRuns'] = [];
  for (const key of keys) {
    const page = await api('GET', '/v1/runs?status=failed&limit=100', undefined, key);
    for (const item of page.body?.items ?? []) {
      const run = (await api('GET', `/v1/runs/${item.runId}`, undefined, key)).body;
      failedRuns.push({ runId: item.runId, code: run?.error?.code, message: run?.error?.message });
    }
  }
  const completed = st.counters.completed as number;
  const failed = st.counters.failed as number;
  const verdict = evaluateStorm(seconds, phases, o.criteria);
  const checks: StormCheck[] = [
    ...verdict.checks,
    {
      name: 'no call made before its Retry-After',
      pass: sim.earlyRetries === 0,
      detail: `${sim.earlyRetries} early retries`,
    },
    {
      name: 'no run fails; every run answered 202 completes',
      pass: failed === 0 && completed === door.accepted && finished(st),
      detail: `${door.accepted} accepted, ${completed} completed, ${failed} failed, ${st.queued.total} still queued`,
    },
    {
      name: 'the door sheds the excess with 429 queue_full and a Retry-After',
      pass: door.shed > 0 && retryAfters.every((r) => Number.isInteger(r) && r >= 1),
      detail: `${door.shed} shed; other answers ${JSON.stringify(door.other)}`,
    },
  ];
  return {
    options: o,
    seconds,
    verdict,
    totals: {
      accepted: door.accepted,
      shed: door.shed,
      otherAnswers: door.other,
      completed,
      failed,
      failedRuns,
      earlyRetries: sim.earlyRetries,
      calls: sim.calls,
      throttled: sim.throttled,
      continuedAsNew: st.history?.continuedAsNew ?? 0,
    },
    retryAfter: {
      min: Math.min(...retryAfters),
      median: median(retryAfters),
      max: Math.max(...retryAfters),
      count: retryAfters.length,
    },
    slowStatus,
    checks,
    pass: checks.every((c) => c.pass),
  };
}
