import type { Client } from '@temporalio/client';
import type { SinkSummary } from '../../src/standins/effectsink/sink';
import type { CallLogSummary } from '../../src/standins/modelplane/call-log';
import { tenantsQuery } from '../../src/contract/scheduler-messages';
import type { LocalDrillStack } from './drill-stack';
import { simAdmin, sleep } from './drill-stack';

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export interface LossTenant {
  name: string;
  token: string;
  /** Token budget per day, when the tenant has one. */
  budget?: number;
}

/** One run as the audit saw it last. */
export interface AuditedRun {
  runId: string;
  tenant: string;
  status: string;
  tokens: number;
}

/** Every run of every tenant, from visibility (orphans included: they were never answered 2xx). */
export async function listAllRuns(s: LocalDrillStack, tenants: LossTenant[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const t of tenants) {
    let cursor: string | null = null;
    do {
      const q: string = `/v1/runs?limit=500${cursor ? `&cursor=${cursor}` : ''}`;
      const r = await s.call('GET', q, { token: t.token, timeoutMs: 30_000 });
      if (r.status !== 200) throw new Error(`list runs of ${t.name}: ${r.status} ${JSON.stringify(r.body)}`);
      for (const item of r.body.items as { runId: string; status: string }[])
        out.set(item.runId, item.status);
      cursor = r.body.nextCursor as string | null;
    } while (cursor);
  }
  return out;
}

/**
 * Waits until every run (`expected` ∪ whatever visibility lists) is terminal, or until nothing has
 * changed for `quietMs` (no run reached a terminal state: the rest are stuck), or `timeoutMs`.
 * Answers the run ids still not terminal.
 */
export async function waitForQuiet(
  s: LocalDrillStack,
  tenants: LossTenant[],
  expected: readonly string[],
  o: { quietMs: number; timeoutMs: number; log: (m: string) => void },
): Promise<{ runIds: string[]; notTerminal: string[]; quietFor: number }> {
  const deadline = Date.now() + o.timeoutMs;
  let lastChange = Date.now();
  let lastTerminal = -1;
  for (;;) {
    const listed = await listAllRuns(s, tenants).catch(() => null);
    if (listed) {
      const ids = new Set([...expected, ...listed.keys()]);
      const notTerminal = [...ids].filter((id) => !TERMINAL.has(listed.get(id) ?? 'unlisted'));
      const terminal = ids.size - notTerminal.length;
      if (terminal !== lastTerminal) {
        lastTerminal = terminal;
        lastChange = Date.now();
      }
      const quietFor = Date.now() - lastChange;
      if (notTerminal.length === 0 || quietFor >= o.quietMs || Date.now() > deadline) {
        if (notTerminal.length > 0)
          o.log(
            `${notTerminal.length} runs not terminal after ${Math.round(quietFor / 1000)} s without progress`,
          );
        return { runIds: [...ids], notTerminal, quietFor };
      }
    }
    await sleep(5000);
  }
}

/** Each run's view (status, tenant, usage), read from the API, 16 at a time; a missing run is `missing`. */
export async function readRuns(
  s: LocalDrillStack,
  runIds: readonly string[],
  tokenOf: (runId: string) => string,
): Promise<AuditedRun[]> {
  const out: AuditedRun[] = [];
  let next = 0;
  const lane = async () => {
    while (next < runIds.length) {
      const runId = runIds[next++]!;
      let r = await s.call('GET', `/v1/runs/${runId}`, { token: tokenOf(runId), timeoutMs: 30_000 });
      for (let i = 0; i < 5 && r.status !== 200 && r.status !== 404; i++) {
        await sleep(1000);
        r = await s.call('GET', `/v1/runs/${runId}`, { token: tokenOf(runId), timeoutMs: 30_000 });
      }
      out.push({
        runId,
        tenant: r.status === 200 ? String(r.body.tenant) : '',
        status: r.status === 200 ? String(r.body.status) : r.status === 404 ? 'missing' : `error ${r.status}`,
        tokens: r.status === 200 ? Number(r.body.usage?.tokens ?? 0) : 0,
      });
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  return out;
}

export interface TenantLedgerCheck {
  tenant: string;
  budget: number | null;
  /** Σ usage of the tenant's runs, from their views. */
  used: number;
  /** What the simulator billed the tenant (where the tokens were spent). */
  billed: number;
  /** The recovered chain's ledger. */
  spent: number;
}

/**
 * Each tenant's `spent` against its runs' usage and the simulator's bill. After a loss the chain's
 * floor is taken again on a schedule (the watchdog's follow-ups), so this waits up to `timeoutMs` for
 * `spent ≥ used` before it reads the final figures.
 */
export async function checkLedgers(
  s: LocalDrillStack,
  client: Client,
  tenants: LossTenant[],
  runs: AuditedRun[],
  timeoutMs: number,
): Promise<TenantLedgerCheck[]> {
  const used = new Map<string, number>();
  for (const r of runs) used.set(r.tenant, (used.get(r.tenant) ?? 0) + r.tokens);
  const names = tenants.map((t) => t.name);
  const read = async () => {
    const views = await client.workflow
      .getHandle(s.schedulerWorkflowId)
      .query(tenantsQuery, names)
      .catch(() => null);
    const bill = await s.bill();
    return tenants.map((t, i): TenantLedgerCheck => ({
      tenant: t.name,
      budget: t.budget ?? null,
      used: used.get(t.name) ?? 0,
      billed: bill.tenants[t.name] ?? 0,
      spent: views?.[i]?.ledger.spent ?? -1,
    }));
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const figures = await read();
    if (figures.every((f) => f.spent >= f.used) || Date.now() > deadline) return figures;
    await sleep(2000);
  }
}

export async function simCalls(s: LocalDrillStack): Promise<CallLogSummary> {
  return simAdmin<CallLogSummary>(s.simUrl, 'calls');
}

/** The failures the audit finds, each a sentence; empty when every check holds. */
export function lossFailures(a: {
  runs: AuditedRun[];
  notTerminal: string[];
  budgetTenants: Set<string>;
  sink: SinkSummary;
  effectStore: { duplicates: number };
  calls: CallLogSummary;
  ledgers: TenantLedgerCheck[];
  recoveries: { kind: string; newChainMs: number }[];
  orphansBetweenStartAndSubmit: number;
  /** Units admitted whose run the API never started (decide first): their leases must expire. */
  decidedNotStarted?: number;
  final: { inFlight?: number; queued?: number } | null;
}): string[] {
  const f: string[] = [];
  const stuck = a.runs.filter((r) => !TERMINAL.has(r.status));
  if (stuck.length || a.notTerminal.length)
    f.push(
      `${Math.max(stuck.length, a.notTerminal.length)} runs not terminal (e.g. ${stuck
        .slice(0, 3)
        .map((r) => `${r.runId}:${r.status}`)
        .join(', ')})`,
    );
  const wrongFailures = a.runs.filter(
    (r) => r.status !== 'completed' && TERMINAL.has(r.status) && !a.budgetTenants.has(r.tenant),
  );
  if (wrongFailures.length) f.push(`${wrongFailures.length} runs of unbudgeted tenants did not complete`);
  const completed = a.runs.filter((r) => r.status === 'completed').length;
  if (a.sink.duplicatedKeys !== 0) f.push(`${a.sink.duplicatedKeys} effects applied twice at the sink`);
  if (a.sink.distinctKeys !== completed)
    f.push(`the sink saw ${a.sink.distinctKeys} effects for ${completed} completed runs`);
  if (a.effectStore.duplicates !== 0) f.push(`${a.effectStore.duplicates} duplicates in the effect store`);
  if (a.calls.runsOverlapping !== 0)
    f.push(`${a.calls.runsOverlapping} runs had two model calls in flight at once (two leases working)`);
  for (const l of a.ledgers) {
    if (l.spent < l.used) f.push(`${l.tenant}: spent ${l.spent} below its runs' usage ${l.used}`);
    if (l.spent < l.billed) f.push(`${l.tenant}: spent ${l.spent} below the simulator's bill ${l.billed}`);
    if (l.budget !== null && l.spent > l.budget)
      f.push(`${l.tenant}: spent ${l.spent} over its budget ${l.budget}`);
    if (l.budget !== null && l.billed > l.budget)
      f.push(`${l.tenant}: billed ${l.billed} over its budget ${l.budget}`);
  }
  for (const r of a.recoveries)
    if (r.newChainMs > 30_000) f.push(`${r.kind}: the new chain came ${r.newChainMs} ms after (over 30 s)`);
  if (a.orphansBetweenStartAndSubmit < 1 && (a.decidedNotStarted ?? 0) < 1)
    f.push(
      'no API kill fell between a run’s start and its submission, nor between a decision and its run’s start',
    );
  if (!a.final || a.final.inFlight !== 0 || a.final.queued !== 0)
    f.push(`scheduler not idle at the end: ${JSON.stringify(a.final)}`);
  return f;
}
