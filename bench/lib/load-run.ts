import type { ApiCall } from './storm-run';

/**
 * A load on a running stack, sampled every second: the simulator's counters (Fairway's calls and
 * the bystander's) and the scheduler's picture. Used by the cold-start storm and the bystander bench.
 */
export interface LoadOptions {
  /** Runs submitted at t = 0 (a burst), and/or … */
  burst: number;
  /** … runs offered per second for `loadSeconds` (open loop). */
  perSecond: number;
  loadSeconds: number;
  steps: number;
  tokensPerStep: number;
  stepMs: number;
  tenants: number;
  maxQueued: number;
  /** Stop sampling this long after the load ends, or as soon as the backlog is done. */
  drainSeconds: number;
}

export interface LoadSecond {
  t: number;
  calls: number;
  throttled: number;
  tokens: number;
  quotaTpm: number;
  bystanderCalls: number;
  bystanderThrottled: number;
  bystanderTokens: number;
  governorTpm: number;
  inFlight: number;
  queued: number;
  completed: number;
}

interface SimStats {
  calls: number;
  throttled: number;
  tokens: number;
  quota: { tpm: number };
  bystander: { calls: number; throttled: number; tokens: number } | null;
}

export async function simJson<T>(simUrl: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${simUrl}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`simulator ${route}: ${res.status}`);
  return (await res.json()) as T;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runLoad(
  api: ApiCall,
  simUrl: string,
  o: LoadOptions,
  log: (line: string) => void = () => {},
): Promise<{ seconds: LoadSecond[]; accepted: number; refused: Record<string, number>; failed: number }> {
  const prefix = `load-${Date.now().toString(36)}`;
  const keys: string[] = [];
  for (let i = 0; i < o.tenants; i++) {
    const r = await api('PUT', `/v1/admin/tenants/${prefix}-${i}`, {
      maxQueued: o.maxQueued,
      maxInFlight: 1000,
    });
    if (r.status !== 201) throw new Error(`tenant: ${r.status} ${JSON.stringify(r.body)}`);
    keys.push(r.body.apiKey as string);
  }
  const body = {
    agent: 'synthetic',
    input: { steps: o.steps, tokensPerStep: o.tokensPerStep, stepMs: o.stepMs },
  };
  let accepted = 0;
  const refused: Record<string, number> = {};
  const pending = new Set<Promise<void>>();
  let n = 0;
  const submit = (): void => {
    const i = n++;
    const p = api('POST', '/v1/runs', body, keys[i % keys.length])
      .then((r) => {
        if (r.status === 202) accepted++;
        else {
          const k = `${r.status} ${r.body?.error?.code ?? ''}`;
          refused[k] = (refused[k] ?? 0) + 1;
        }
      })
      .catch(() => void (refused.error = (refused.error ?? 0) + 1))
      .finally(() => pending.delete(p));
    pending.add(p);
  };
  const status = async () => {
    for (;;) {
      const r = await api('GET', '/v1/admin/scheduler');
      if (r.status === 200 && r.body?.counters) return r.body;
      await pause(100);
    }
  };

  const t0 = Date.now();
  let stop = false;
  const loader = (async () => {
    // The burst goes out 32 requests at a time (a client's connection pool), the rest at its rate.
    for (let i = 0; i < o.burst; i++) {
      submit();
      if (pending.size >= 32) await Promise.race(pending);
    }
    let offered = 0;
    while (!stop && Date.now() - t0 < o.loadSeconds * 1000) {
      const due = Math.floor(((Date.now() - t0) / 1000) * o.perSecond);
      for (; offered < due; offered++) submit();
      await pause(20);
    }
  })();

  const seconds: LoadSecond[] = [];
  let prev = await simJson<SimStats>(simUrl, '/admin/stats');
  let prevSt = await status();
  for (let t = 1; ; t++) {
    await pause(Math.max(0, t0 + t * 1000 - Date.now()));
    const [sim, st] = await Promise.all([simJson<SimStats>(simUrl, '/admin/stats'), status()]);
    const s: LoadSecond = {
      t,
      calls: sim.calls - prev.calls,
      throttled: sim.throttled - prev.throttled,
      tokens: sim.tokens - prev.tokens,
      quotaTpm: sim.quota.tpm,
      bystanderCalls: (sim.bystander?.calls ?? 0) - (prev.bystander?.calls ?? 0),
      bystanderThrottled: (sim.bystander?.throttled ?? 0) - (prev.bystander?.throttled ?? 0),
      bystanderTokens: (sim.bystander?.tokens ?? 0) - (prev.bystander?.tokens ?? 0),
      governorTpm: st.governor.tokensPerMinute,
      inFlight: st.inFlight,
      queued: st.queued.total,
      completed: st.counters.completed - prevSt.counters.completed,
    };
    seconds.push(s);
    [prev, prevSt] = [sim, st];
    log(
      `t=${String(t).padStart(3)}s calls=${s.calls} throttled=${s.throttled} served=${s.tokens * 60}/min` +
        ` bystander=${s.bystanderTokens * 60}/min (${s.bystanderThrottled}/${s.bystanderCalls} throttled)` +
        ` governor=${s.governorTpm} inFlight=${s.inFlight} queued=${s.queued}`,
    );
    const loadDone = t >= o.loadSeconds && pending.size === 0;
    if (loadDone && ((s.queued === 0 && s.inFlight === 0) || t >= o.loadSeconds + o.drainSeconds)) break;
  }
  stop = true;
  await loader;
  await Promise.all([...pending]);
  return { seconds, accepted, refused, failed: prevSt.counters.failed as number };
}

/** Sums seconds in (from, to]: Fairway's and the bystander's figures against the quota. */
export function sumWindow(points: readonly LoadSecond[], from: number, to: number) {
  let calls = 0;
  let throttled = 0;
  let tokens = 0;
  let quota = 0;
  let bCalls = 0;
  let bThrottled = 0;
  let bTokens = 0;
  for (const p of points) {
    if (p.t <= from || p.t > to) continue;
    calls += p.calls;
    throttled += p.throttled;
    tokens += p.tokens;
    quota += p.quotaTpm / 60;
    bCalls += p.bystanderCalls;
    bThrottled += p.bystanderThrottled;
    bTokens += p.bystanderTokens;
  }
  return {
    from,
    to,
    calls,
    throttled,
    throttledShare: calls > 0 ? throttled / calls : 0,
    utilisation: quota > 0 ? tokens / quota : 0,
    bystander: {
      calls: bCalls,
      throttled: bThrottled,
      throttledShare: bCalls > 0 ? bThrottled / bCalls : 0,
      utilisation: quota > 0 ? bTokens / quota : 0,
    },
  };
}
