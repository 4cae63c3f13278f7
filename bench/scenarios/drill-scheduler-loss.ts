import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AGENTS } from '../../src/agents/catalog';
import type { SinkSummary } from '../../src/standins/effectsink/sink';
import type { CallLogSummary } from '../../src/standins/modelplane/call-log';
import { knowsQuery, ledgerQuery } from '../../src/contract/scheduler-messages';
import { sleep, startDrillStack, until } from '../lib/drill-stack';
import type { LocalDrillStack } from '../lib/drill-stack';
import {
  checkLedgers,
  listAllRuns,
  lossFailures,
  readRuns,
  simCalls,
  TERMINAL,
  waitForQuiet,
} from '../lib/loss-audit';
import type { LossTenant, TenantLedgerCheck } from '../lib/loss-audit';
import { mulberry32 } from '../lib/prng';
import { heldWindow, newChainAfter, resetScheduler, terminateScheduler } from '../lib/scheduler-loss';
import type { HeldWindow } from '../lib/scheduler-loss';
import type { DrillOptions } from './drill-deploy';
import { modelWordsRequests, ModelWordsInputSchema } from '../agents/model-words';
import { requestWorstCase } from '../lib/call-ledger';

/** The user's agents module half the units run on (outside src/), served by `fairway worker`. */
const MODEL_AGENTS = path.join(__dirname, '..', 'agents', 'model-words.ts');

export interface LossRecovery {
  kind: 'terminate' | 'reset';
  /** Units whose effect had landed at the sink when it struck. */
  atDone: number;
  /** The CLI command to a new chain running (describe: RUNNING, another run id). */
  newChainMs: number;
  /**
   * The CLI command (or, drained, the resume) to the first admission the new chain reports (its
   * counter rising after it first answered).
   */
  admittingMs: number;
  /** The CLI command to the next effect landing at the sink. */
  progressMs: number;
  /**
   * Drained with intake `hold` before the loss: the new chain's window of status reads before the
   * resume (nothing may be admitted in it), and the resume's ms after the CLI command.
   */
  held?: HeldWindow & { resumedMs: number };
}

export interface ApiKillRecord {
  /** Submissions sent to the API child at once; answered 2xx before the SIGKILL. */
  sent: number;
  answered: number;
  /** Runs that exist (visibility) without a 2xx, and of them those the scheduler did not know: started, never submitted. */
  orphans: number;
  betweenStartAndSubmit: number;
  /**
   * Decided first (RUN_START_ORDER=decide-first): units the scheduler admitted for this tenant during
   * the burst (its ledger's `reserve` entries) whose run was never started and that got no 2xx: the
   * API died between the decision and the start. Their leases must expire (the scheduler idle at the end).
   */
  decidedNotStarted: number;
}

export interface SchedulerLossResult {
  units: number;
  /** Runs in all: accepted (2xx), plus the orphans of the API kills. */
  runs: number;
  accepted: number;
  refusedByBudget: number;
  statuses: Record<string, number>;
  notTerminal: string[];
  recoveries: LossRecovery[];
  apiKills: ApiKillRecord[];
  sink: SinkSummary;
  effectStore: { effects: number; attempts: number; duplicates: number };
  calls: CallLogSummary;
  ledgers: TenantLedgerCheck[];
  final: { inFlight?: number; queued?: number; counters?: Record<string, number> } | null;
  seconds: number;
  pass: boolean;
  failures: string[];
}

/** What POST /v1/runs takes for one unit. */
interface UnitBody {
  agent: string;
  input: Record<string, unknown>;
}

interface Wave {
  tenant: LossTenant;
  indices: number[];
}

/**
 * Issue 9's scheduler-loss drill on one dev server: `units` units with effects across 5 tenants (the
 * first with a budget that binds, the second with one that does not), submitted in three waves. During
 * the run the scheduler is terminated with `temporal workflow terminate`, an API process is SIGKILLed
 * while it has submissions in hand (until one falls between a run's start and its submission), and
 * the scheduler is later reset with `temporal workflow reset`. Then every run must end; no run may have
 * two model calls in flight at once at the simulator; the sink must see each completed run's effect
 * exactly once; each tenant's `spent` must be at least its runs' usage and, with a budget, neither it nor
 * the simulator's bill may pass the budget, and it may not fall below the bill. Every other unit runs on a
 * user's agent (bench/agents/model-words.ts: ctx.model calls, prompts of 20–1,500 words) served by the
 * user's own worker (`fairway worker --agents`).
 */
/**
 * API children SIGKILLed at most, until one falls in a fault window: between a run's start and its
 * submission (start first), or between a decision and its run's start (decide first), each a few ms
 * of a burst's handling.
 */
const API_KILLS = 25;

export async function runSchedulerLossDrill(
  o: DrillOptions & { seed: number; quietMs: number; burst: number; onDone?: (done: number) => void },
): Promise<SchedulerLossResult> {
  const log = o.log ?? (() => {});
  const rnd = mulberry32(o.seed);
  const t0 = Date.now();
  const s = await startDrillStack({
    concurrency: o.concurrency,
    log,
    onStatus: o.onStatus,
    sink: true,
    agents: [MODEL_AGENTS],
    env: {
      // A run that was started but never submitted offers itself after 20–40 s (default 300 s).
      RUN_REOFFER_FIRST_SECONDS: '20',
      RUN_REOFFER_MAX_SECONDS: '60',
    },
  });
  const connection = await Connection.connect({ address: s.temporalAddress });
  const client = new Client({ connection });
  const scheduler = (runId?: string) => client.workflow.getHandle(s.schedulerWorkflowId, runId);
  let stopTicker = false;
  let done = 0;
  const ticker = (async () => {
    while (!stopTicker) {
      done = (await s.sink().catch(() => null))?.distinctKeys ?? done;
      o.onDone?.(done);
      await sleep(1000);
    }
  })();
  try {
    await Promise.all([s.startWorker('loss-1'), s.startAgentsWorker('loss-user-1')]);
    const input = { steps: o.steps, stepMs: o.stepMs, tokensPerStep: 50, effect: true };
    const cost = AGENTS.synthetic.estimate(AGENTS.synthetic.input.parse(input));
    // Unit k of a tenant: even k on the user's agent (its prompt's length drawn from the seed), odd k synthetic.
    const words = mulberry32(o.seed + 1);
    const modelInputs = Array.from({ length: o.units }, () =>
      ModelWordsInputSchema.parse({ words: 20 + Math.floor(words() * 1481), calls: o.steps, effect: true }),
    );
    const unit = (k: number): UnitBody =>
      k % 2 === 0 ? { agent: 'model-words', input: modelInputs[k]! } : { agent: 'synthetic', input };
    // What a unit can spend at most: a model unit's calls at their worst cases (its estimate is far above).
    const costOf = (k: number) =>
      k % 2 === 0 ? modelWordsRequests(modelInputs[k]!).reduce((a, r) => a + requestWorstCase(r), 0) : cost;
    const per = Math.floor(o.units / 5);
    const tenants: LossTenant[] = [];
    const unitsOf: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const name = `loss-${i}`;
      const n = i === 5 ? o.units - 4 * per : per;
      unitsOf.push(n);
      // Tenant 1's budget covers 70 % of its units (the door refuses the rest); tenant 2's covers all twice.
      const all = Array.from({ length: n }, (_, k) => costOf(k)).reduce((a, c) => a + c, 0);
      const budget = i === 1 ? Math.floor(0.7 * all) : i === 2 ? 2 * all : undefined;
      const settings: Record<string, unknown> = { maxQueued: 100_000, maxInFlight: o.concurrency };
      if (budget !== undefined) settings.budget = { tokens: budget, period: 'day' };
      tenants.push({
        name,
        token: await s.tenant(name, settings),
        ...(budget !== undefined ? { budget } : {}),
      });
    }
    const wave = (from: number, to: number): Wave[] =>
      tenants.map((tenant, i) => {
        const n = unitsOf[i]!;
        const idx: number[] = [];
        for (let k = Math.floor(from * n); k < Math.floor(to * n); k++) idx.push(k);
        return { tenant, indices: idx };
      });

    const accepted: string[] = [];
    const owner = new Map<string, LossTenant>();
    let refusedByBudget = 0;
    const submitWave = async (w: Wave[]): Promise<void> => {
      await Promise.all(
        w.map(async ({ tenant, indices }) => {
          const r = await submitEach(s, tenant, indices, unit, o.timeoutMs);
          refusedByBudget += r.refused;
          for (const id of r.ids) {
            accepted.push(id);
            owner.set(id, tenant);
          }
        }),
      );
    };

    const waves: Promise<void>[] = [submitWave(wave(0, 0.4))];
    const recoveries: LossRecovery[] = [];
    const apiKills: ApiKillRecord[] = [];
    const at = (share: number) =>
      until(
        `${Math.floor(share * o.units)} effects at the sink`,
        async () => done,
        (d) => d >= Math.floor(share * o.units),
        o.timeoutMs,
        250,
      );

    // 1. Drained with intake `hold`, then terminated with the CLI mid-drain while runs are queued and
    // in flight; the second wave arrives meanwhile (held). The new chain must admit nothing until the
    // resume.
    await at(0.15);
    const drain = await s.call('POST', '/v1/admin/drain', { body: { intake: 'hold' }, timeoutMs: 60_000 });
    if (drain.status !== 200) throw new Error(`drain: ${drain.status} ${JSON.stringify(drain.body)}`);
    await sleep(Math.floor(rnd() * 500));
    recoveries.push(
      await loseScheduler(
        s,
        scheduler,
        'terminate',
        () => done,
        o.timeoutMs,
        log,
        () => {
          waves.push(submitWave(wave(0.4, 0.7)));
        },
        true,
      ),
    );

    // 2. An API process SIGKILLed with submissions in hand, until one falls between start and submit.
    // The second wave is in (so the runs of this tenant that appear meanwhile are the burst's alone).
    await at(0.35);
    await Promise.all(waves);
    const last = tenants[4]!;
    for (let i = 0; i < API_KILLS; i++) {
      const k = await killApiMidSubmission(s, client, last, input, o.burst, rnd, i, log);
      apiKills.push(k.record);
      for (const id of k.accepted) {
        accepted.push(id);
        owner.set(id, last);
      }
      if (k.record.betweenStartAndSubmit > 0 || k.record.decidedNotStarted > 0) break;
    }
    waves.push(submitWave(wave(0.7, 1)));

    // 3. Reset to the first workflow task of the chain's current run, while the last wave is in line.
    await at(0.55);
    await sleep(Math.floor(rnd() * 500));
    recoveries.push(await loseScheduler(s, scheduler, 'reset', () => done, o.timeoutMs, log));

    await Promise.all(waves);
    log(`all waves submitted: ${accepted.length} accepted, ${refusedByBudget} refused by budget`);
    const quiet = await waitForQuiet(s, tenants, accepted, {
      quietMs: o.quietMs,
      timeoutMs: o.timeoutMs,
      log,
    });
    const listed = await listAllRuns(s, tenants);
    const runIds = [...new Set([...accepted, ...listed.keys()])];
    const tokenOf = new Map<string, string>();
    for (const t of tenants)
      for (const id of runIds) if (id.startsWith(`run-${t.name}-`)) tokenOf.set(id, t.token);
    const runs = await readRuns(s, runIds, (id) => tokenOf.get(id) ?? owner.get(id)?.token ?? '');
    const statuses: Record<string, number> = {};
    for (const r of runs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    const ledgers = await checkLedgers(s, client, tenants, runs, o.quietMs);
    const sink = await until(
      'every completed run’s effect at the sink',
      () => s.sink(),
      (x) => x.distinctKeys >= (statuses.completed ?? 0),
      30_000,
      500,
    ).catch(() => s.sink());
    const effectStore = (await s.call('GET', '/v1/admin/effects/summary')).body;
    const calls = await simCalls(s);
    const st = await s.status();
    const final = st ? { inFlight: st.inFlight, queued: st.queued?.total, counters: st.counters } : null;
    const failures = lossFailures({
      runs,
      notTerminal: quiet.notTerminal.filter(
        (id) => !TERMINAL.has(runs.find((r) => r.runId === id)?.status ?? ''),
      ),
      budgetTenants: new Set(tenants.filter((t) => t.budget !== undefined).map((t) => t.name)),
      sink,
      effectStore,
      calls,
      ledgers,
      recoveries,
      orphansBetweenStartAndSubmit: apiKills.reduce((n, k) => n + k.betweenStartAndSubmit, 0),
      decidedNotStarted: apiKills.reduce((n, k) => n + k.decidedNotStarted, 0),
      final,
    });
    for (const r of recoveries) {
      if (r.held && (r.held.admitted > 0 || r.held.notHeld > 0))
        failures.push(
          `${r.kind}: drained with hold, the new chain admitted ${r.held.admitted} before the resume ` +
            `(${r.held.notHeld} of ${r.held.reads} reads not held)`,
        );
      if (r.held && r.held.queued === 0)
        failures.push(`${r.kind}: the new chain held no queued run to prove the drain on`);
    }
    return {
      units: o.units,
      runs: runs.length,
      accepted: accepted.length,
      refusedByBudget,
      statuses,
      notTerminal: runs.filter((r) => !TERMINAL.has(r.status)).map((r) => `${r.runId}:${r.status}`),
      recoveries,
      apiKills,
      sink,
      effectStore,
      calls,
      ledgers,
      final,
      seconds: (Date.now() - t0) / 1000,
      pass: failures.length === 0,
      failures,
    };
  } finally {
    stopTicker = true;
    await ticker.catch(() => undefined);
    await connection.close().catch(() => undefined);
    await s.stop();
  }
}

/**
 * Submits the units `indices` of `tenant` through the stack's API, four at a time, with idempotency
 * keys (a retry after a timeout or a 503 while the scheduler is lost never makes a second run). A
 * refusal for the tenant's budget is final; other refusals are retried after their Retry-After.
 */
async function submitEach(
  s: LocalDrillStack,
  tenant: LossTenant,
  indices: number[],
  unit: (k: number) => UnitBody,
  timeoutMs: number,
): Promise<{ ids: string[]; refused: number }> {
  const deadline = Date.now() + timeoutMs;
  const ids: string[] = [];
  let refused = 0;
  let next = 0;
  const lane = async () => {
    while (next < indices.length) {
      const i = indices[next++]!;
      for (;;) {
        const r = await s.call('POST', '/v1/runs', {
          token: tenant.token,
          body: { ...unit(i), idempotencyKey: `loss-${tenant.name}-${i}` },
          timeoutMs: 60_000,
        });
        if (r.status === 202 || r.status === 200) {
          ids.push(r.body.runId as string);
          break;
        }
        if (r.body?.error?.code === 'budget_exhausted') {
          refused++;
          break;
        }
        if (Date.now() > deadline || ![0, 409, 429, 503].includes(r.status))
          throw new Error(`submit ${tenant.name} ${i}: ${r.status} ${JSON.stringify(r.body)}`);
        await sleep(Math.min(2000, 1000 * Number(r.headers.get('retry-after') ?? 1)));
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, lane));
  return { ids, refused };
}

/** Terminates or resets the scheduler with the CLI and measures how the fleet comes back. */
async function loseScheduler(
  s: LocalDrillStack,
  scheduler: (runId?: string) => { describe(): Promise<{ status: { name: string }; runId?: string }> },
  kind: 'terminate' | 'reset',
  done: () => number,
  timeoutMs: number,
  log: (m: string) => void,
  meanwhile?: () => void,
  drained = false,
): Promise<LossRecovery> {
  const before = await scheduler().describe();
  const atDone = done();
  let lostAt = 0;
  const lose = kind === 'terminate' ? terminateScheduler : resetScheduler;
  // On a loaded server the CLI's call can time out after it applied: retried for the same run only,
  // and not at all once that run has ended.
  for (let attempt = 1; ; attempt++) {
    lostAt = Date.now(); // the attempt that applies is the one the recovery is measured from
    const err = await lose(s.temporalAddress, s.schedulerWorkflowId, before.runId).then(
      () => null,
      (e: unknown) => e,
    );
    if (!err) break;
    const old = await scheduler(before.runId)
      .describe()
      .catch(() => null);
    if (old && old.status.name !== 'RUNNING') break;
    // A loaded server refuses the CLI's history read with "Workflow is busy" for a while (the
    // scheduler takes an update or signal every few ms): about half a minute of tries.
    if (attempt >= 15) throw err;
    const said = String((err as { stderr?: unknown }).stderr ?? err).trim();
    log(`${kind}: the CLI failed (${said.split('\n').slice(-1)[0]}), trying again`);
    await sleep(2000);
  }
  meanwhile?.();
  const progressed = until(
    'an effect after the loss',
    async () => done(),
    (d) => d > atDone,
    timeoutMs,
    100,
  ).then(() => Date.now() - lostAt);
  progressed.catch(() => undefined);
  const chain = await newChainAfter(() => scheduler().describe(), before.runId!, lostAt, timeoutMs, 100);
  const first = await until(
    'the new chain answering',
    () => s.status(),
    (v) => v !== null,
    timeoutMs,
    100,
  );
  let held: LossRecovery['held'];
  if (drained) {
    // Runs queued before the loss come back into line (the watchdog nudges them); then a window of
    // status reads over two lease TTLs on the new chain, before the resume.
    await until(
      'the held runs back in line',
      () => s.status(),
      (v) => v !== null && (v.queued.total > 0 || v.counters.admitted > 0),
      timeoutMs,
      250,
    ).catch(() => undefined);
    const ttl = ((first.config?.leaseTtlSeconds as number | undefined) ?? 60) * 1000;
    const window = await heldWindow(
      () => s.status(),
      () => scheduler().describe(),
      chain.runId,
      {
        reads: 5,
        minMs: Math.min(2 * ttl, 60_000),
        baseAdmitted: 0,
      },
    );
    const resume = await s.call('POST', '/v1/admin/resume', { timeoutMs: 60_000 });
    if (resume.status !== 200) throw new Error(`resume: ${resume.status} ${JSON.stringify(resume.body)}`);
    held = { ...window, resumedMs: Date.now() - lostAt };
    log(
      `${kind}: drained chain held ${window.queued} queued over ${window.reads} reads in ${window.ms} ms, admitted ${window.admitted}`,
    );
  }
  const base = held ? 0 : (first.counters.admitted as number);
  await until(
    'an admission by the new chain',
    () => s.status(),
    (v) => v !== null && v.counters.admitted > base,
    timeoutMs,
    100,
  );
  const admittingMs = Date.now() - (held ? lostAt + held.resumedMs : lostAt);
  const progressMs = await progressed;
  log(
    `${kind} at ${atDone} done: new chain after ${chain.ms} ms, admitting after ${admittingMs} ms, ` +
      `next effect after ${progressMs} ms`,
  );
  return { kind, atDone, newChainMs: chain.ms, admittingMs, progressMs, ...(held ? { held } : {}) };
}

/**
 * Starts an API child, sends it `burst` submissions at once (no idempotency keys: the client gives up
 * on what is not answered), SIGKILLs it a random 50–650 ms later, then finds the runs that exist
 * without a 2xx and asks the scheduler which of them it does not know: those were started and never
 * submitted, and must offer themselves.
 */
async function killApiMidSubmission(
  s: LocalDrillStack,
  client: Client,
  tenant: LossTenant,
  input: Record<string, unknown>,
  burst: number,
  rnd: () => number,
  i: number,
  log: (m: string) => void,
): Promise<{ record: ApiKillRecord; accepted: string[] }> {
  const before = new Set((await listAllRuns(s, [tenant])).keys());
  const burstAt = Date.now();
  const api = await s.startApi(`loss-${i + 1}`);
  const posts = Array.from({ length: burst }, () =>
    fetch(`${api.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'synthetic', input }),
      signal: AbortSignal.timeout(60_000),
    })
      .then(async (r) => (r.status === 202 ? ((await r.json()) as { runId: string }).runId : null))
      .catch(() => null),
  );
  await sleep(50 + Math.floor(rnd() * 600));
  await api.child.kill();
  const accepted = (await Promise.all(posts)).filter((x): x is string => x !== null);
  await sleep(2000); // visibility
  const after = await listAllRuns(s, [tenant]);
  const orphans = [...after.keys()].filter((id) => !before.has(id) && !accepted.includes(id));
  const known = orphans.length
    ? await client.workflow.getHandle(s.schedulerWorkflowId).query(knowsQuery, orphans)
    : [];
  const betweenStartAndSubmit = orphans.filter((id, k) => !known[k] && after.get(id) === 'queued').length;
  const ledger = await client.workflow.getHandle(s.schedulerWorkflowId).query(ledgerQuery, tenant.name, 1000);
  const decided = new Set(
    ledger.filter((e) => e.kind === 'reserve' && Date.parse(e.at) >= burstAt).map((e) => e.runId),
  );
  const decidedNotStarted = [...decided].filter((id) => !after.has(id) && !accepted.includes(id)).length;
  const record = {
    sent: burst,
    answered: accepted.length,
    orphans: orphans.length,
    betweenStartAndSubmit,
    decidedNotStarted,
  };
  log(
    `API SIGKILLed with ${burst} submissions in hand: ${accepted.length} answered 2xx, ` +
      `${orphans.length} runs without an answer, ${betweenStartAndSubmit} of them started but never submitted; ` +
      `${decidedNotStarted} admitted and never started`,
  );
  return { record, accepted };
}
