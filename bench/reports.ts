import path from 'node:path';
import Database from 'better-sqlite3';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { WorkflowBundle } from '@temporalio/worker';
import { workflowsPath } from '../src/fleet/worker';
import { mapLimit } from '../src/util/map-limit';
import { eventMs, eventName } from './lib/history-account';
import { flags, startBenchStack, writeResult } from './lib/bench-stack';
import type { BenchStack } from './lib/bench-stack';
import { percentile } from './lib/stats';
import { capturedLog, startSyntheticWorkers } from './lib/extra-workers';

type HistoryEvent = Parameters<typeof eventName>[0];

/** One configuration's figures: how reports reached the scheduler, and what the scheduler paid. */
interface ReportsFigures {
  path: 'update' | 'pull';
  workers: number;
  runs: number;
  completed: number;
  seconds: number;
  runsPerSecond: number;
  /** The scheduler chain's workflow tasks per second of the measured window, and its history events per run. */
  schedulerTasksPerSecond: number;
  schedulerEventsPerRun: number;
  /** `workerReport` updates in the scheduler's history, and report deliveries the workers saw refused. */
  reportUpdates: number;
  refusedReports: number;
  pulls: number;
  /** From a report's append to the end of the pull that carried it (pull only), ms. */
  landingMs?: { p50: number; p99: number; max: number; reports: number };
  /** The tenant's ledger against the provider's bill. */
  ledgerSpent: number;
  billed: number;
}

const FAST = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' };

/** The scheduler chain's events: every run of its workflow id, oldest first. */
async function chainEvents(s: BenchStack): Promise<HistoryEvent[]> {
  const runs: { runId: string; start: number }[] = [];
  for await (const wf of s.client.workflow.list({ query: `WorkflowId = '${s.config.schedulerWorkflowId}'` }))
    runs.push({ runId: wf.runId, start: wf.startTime.getTime() });
  runs.sort((a, b) => a.start - b.start);
  const out: HistoryEvent[] = [];
  for (const r of runs) {
    const h = await s.client.workflow.getHandle(s.config.schedulerWorkflowId, r.runId).fetchHistory();
    out.push(...((h.events ?? []) as HistoryEvent[]));
  }
  return out;
}

/** When each logged report (by its sequence number) was booked: the end of the pull whose answer carried it. */
function bookedAt(events: HistoryEvent[]): { upTo: number; at: number }[] {
  const scheduled = new Set<string>();
  const out: { upTo: number; at: number }[] = [];
  for (const e of events as Record<string, any>[]) {
    const sch = e.activityTaskScheduledEventAttributes;
    if (sch?.activityType?.name === 'pullReports') scheduled.add(String(e.eventId));
    const done = e.activityTaskCompletedEventAttributes;
    if (done && scheduled.has(String(done.scheduledEventId))) {
      const data = done.result?.payloads?.[0]?.data;
      if (!data) continue;
      const r = JSON.parse(Buffer.from(data).toString()) as { after: number; reports: unknown[] };
      if (r.reports.length) out.push({ upTo: r.after, at: eventMs(e as HistoryEvent) });
    }
  }
  return out;
}

const DEFAULTS = { runs: 600, steps: 2, stepMs: 200, concurrency: 96, timeoutSeconds: 900 };

async function runOne(
  p: 'update' | 'pull',
  workers: number,
  f: typeof DEFAULTS,
  workflowBundle: WorkflowBundle,
): Promise<ReportsFigures> {
  const s = await startBenchStack(
    { REPORTS: p, FLEET_CONCURRENCY: String(f.concurrency), ...FAST },
    { workflows: { workflowBundle } },
  );
  const warnings: string[] = [];
  const extra = await startSyntheticWorkers({
    count: workers - 1,
    address: s.config.temporal.address,
    config: s.config,
    client: s.client,
    modelBaseUrl: s.modelBaseUrl,
    log: capturedLog(warnings),
    workflows: { workflowBundle },
  }).catch(async (err: unknown) => {
    await s.stop();
    throw err;
  });
  try {
    const tenant = 'reports';
    const key = await s.tenant(tenant, { maxInFlight: f.concurrency });
    const t0 = Date.now();
    const ids = await mapLimit(
      Array.from({ length: f.runs }, (_, i) => i),
      20,
      async () => {
        const r = await s.call(
          'POST',
          '/v1/runs',
          { agent: 'synthetic', input: { steps: f.steps, tokensPerStep: 100, stepMs: f.stepMs } },
          key,
        );
        if (r.status !== 202) throw new Error(`submit: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.runId as string;
      },
    );
    const final = new Set(['completed', 'failed', 'cancelled']);
    let statuses: string[] = [];
    for (;;) {
      statuses = await mapLimit(
        ids,
        20,
        async (id) => (await s.call('GET', `/v1/runs/${id}`, undefined, key)).body.status,
      );
      if (statuses.every((st) => final.has(st))) break;
      if (Date.now() - t0 > f.timeoutSeconds * 1000)
        throw new Error(`${p} ×${workers}: runs not done in time`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const seconds = (Date.now() - t0) / 1000;
    let me = (await s.call('GET', '/v1/tenants/me', undefined, key)).body;
    for (let i = 0; i < 60 && (me.inFlight !== 0 || me.ledger.reserved !== 0); i++) {
      await new Promise((r) => setTimeout(r, 500));
      me = (await s.call('GET', '/v1/tenants/me', undefined, key)).body;
    }
    const bill = (await fetch(`${s.simUrl}/admin/bill`).then((r) => r.json())) as {
      tenants: Record<string, number>;
    };
    const events = (await chainEvents(s)).filter((e) => eventMs(e) >= t0);
    const names = events.map(eventName);
    const count = (n: string) => names.filter((x) => x === n).length;
    let landingMs: ReportsFigures['landingMs'];
    if (p === 'pull') {
      const db = new Database(path.join(s.config.dataDir, 'call-intents.db'), { readonly: true });
      const rows = db
        .prepare(
          'SELECT seq, created_at AS at FROM scheduler_reports WHERE scheduler_id = ? AND created_at >= ? ORDER BY seq',
        )
        .all(s.config.schedulerWorkflowId, t0) as { seq: number; at: number }[];
      db.close();
      const booked = bookedAt(events);
      const lags: number[] = [];
      let b = 0;
      for (const row of rows) {
        while (b < booked.length && booked[b]!.upTo < row.seq) b++;
        if (b < booked.length) lags.push(booked[b]!.at - row.at);
      }
      lags.sort((x, y) => x - y);
      landingMs = {
        p50: percentile(lags, 50),
        p99: percentile(lags, 99),
        max: lags.at(-1) ?? 0,
        reports: lags.length,
      };
    }
    const figures: ReportsFigures = {
      path: p,
      workers,
      runs: f.runs,
      completed: statuses.filter((st) => st === 'completed').length,
      seconds: Math.round(seconds * 10) / 10,
      runsPerSecond: Math.round((f.runs / seconds) * 100) / 100,
      schedulerTasksPerSecond: Math.round((count('workflowTaskCompleted') / seconds) * 10) / 10,
      schedulerEventsPerRun: Math.round((events.length / f.runs) * 100) / 100,
      reportUpdates: count('workflowExecutionUpdateAccepted(workerReport)'),
      refusedReports: warnings.filter((w) => /report failed/.test(w)).length,
      pulls: events.filter(
        (e) =>
          (e as Record<string, any>).activityTaskScheduledEventAttributes?.activityType?.name ===
          'pullReports',
      ).length,
      ...(landingMs ? { landingMs } : {}),
      ledgerSpent: me.ledger.spent as number,
      billed: bill.tenants[tenant] ?? 0,
    };
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    await extra.close();
    await s.stop();
  }
}

/**
 * `npm run bench -- reports [--runs 600] [--workers 2,64] [--paths pull,update]`: the same load with
 * its worker reports sent as updates or pulled from the report log, at each number of workers (in
 * this process, one connection each): the scheduler's workflow tasks a second and history events a
 * run, reports refused, and (pull) how long a report took from its append to its booking.
 */
export async function runReportsBench(argv: string[]): Promise<void> {
  const list = (name: string, def: string) => {
    const i = argv.indexOf(`--${name}`);
    return (i >= 0 ? argv[i + 1]! : def).split(',');
  };
  const workers = list('workers', '2,64').map(Number);
  const paths = list('paths', 'pull,update') as ('update' | 'pull')[];
  const rest = argv.filter(
    (a, i) => !['--workers', '--paths'].includes(a) && !['--workers', '--paths'].includes(argv[i - 1] ?? ''),
  );
  const f = flags(rest, DEFAULTS, { workers: workers.join(','), paths: paths.join(',') });
  const results: ReportsFigures[] = [];
  // One bundle for every worker (each would bundle the workflows again, seconds of CPU apiece).
  const workflowBundle = await bundleWorkflowCode({ workflowsPath });
  for (const p of paths) for (const w of workers) results.push(await runOne(p, w, f, workflowBundle));
  console.log(`wrote ${writeResult('reports', { results })}`);
}
