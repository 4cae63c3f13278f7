import type { Client } from '@temporalio/client';
import { mapLimit } from '../../src/util/map-limit';

type HistoryEvent = Record<string, unknown> & {
  eventTime?: { seconds?: unknown; nanos?: number | null } | null;
};

/** An event's type, from its attributes' field name (`workflowTaskCompleted`…); signals and updates carry their name. */
export function eventName(e: HistoryEvent): string {
  const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && e[k] != null);
  const base = key ? key.slice(0, -'EventAttributes'.length) : 'unknown';
  const attrs = key ? (e[key] as Record<string, any>) : {};
  if (base === 'workflowExecutionSignaled') return `${base}(${attrs.signalName})`;
  if (base === 'workflowExecutionUpdateAccepted')
    return `${base}(${attrs.acceptedRequest?.input?.name ?? '?'})`;
  if (base === 'markerRecorded') return `${base}(${attrs.markerName})`;
  return base;
}

export const eventMs = (e: HistoryEvent): number =>
  Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

/** Event counts by type, when the run's workflow started and when it received its admission (its `admit` signal, or its start). */
export interface RunHistory {
  counts: Record<string, number>;
  startedAtMs: number | undefined;
  admittedAtMs: number | undefined;
}

/** Whether a run's start event carries its admission (a `RunStart` with `admission`, its third argument). */
export function startedAdmitted(e: HistoryEvent): boolean {
  const attrs = e.workflowExecutionStartedEventAttributes as
    { input?: { payloads?: { data?: Uint8Array | null }[] | null } | null } | undefined;
  const data = attrs?.input?.payloads?.[2]?.data;
  if (!data) return false;
  try {
    return (JSON.parse(Buffer.from(data).toString()) as { admission?: unknown }).admission !== undefined;
  } catch {
    return false;
  }
}

export async function runHistory(client: Client, workflowId: string): Promise<RunHistory> {
  const h = await client.workflow.getHandle(workflowId).fetchHistory();
  const counts: Record<string, number> = {};
  let startedAtMs: number | undefined;
  let admittedAtMs: number | undefined;
  for (const e of (h.events ?? []) as HistoryEvent[]) {
    const name = eventName(e);
    counts[name] = (counts[name] ?? 0) + 1;
    if (name === 'workflowExecutionStarted' && startedAtMs === undefined) startedAtMs = eventMs(e);
    if (name === 'workflowExecutionSignaled(admit)' && admittedAtMs === undefined) admittedAtMs = eventMs(e);
    // Decided first: the run starts with its admission (runWorkflow's third argument).
    if (name === 'workflowExecutionStarted' && startedAdmitted(e)) admittedAtMs ??= eventMs(e);
  }
  return { counts, startedAtMs, admittedAtMs };
}

/** Mean count per run of each event type over the histories. */
export function perRun(histories: Record<string, number>[], runs = histories.length): Record<string, number> {
  const total: Record<string, number> = {};
  for (const c of histories) for (const [k, v] of Object.entries(c)) total[k] = (total[k] ?? 0) + v;
  return Object.fromEntries(Object.entries(total).map(([k, v]) => [k, v / Math.max(1, runs)]));
}

/** Each execution of one workflow id (the scheduler continues-as-new) with its history's events. */
export async function chainHistories(
  client: Client,
  workflowId: string,
): Promise<{ runId: string; events: HistoryEvent[] }[]> {
  const runIds: string[] = [];
  for await (const w of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runIds.push(w.runId);
  return mapLimit(runIds, 4, async (runId) => {
    const h = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    return { runId, events: (h.events ?? []) as HistoryEvent[] };
  });
}

/** A chain's events by type, all its executions together. */
export function eventCounts(histories: { events: HistoryEvent[] }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const h of histories) for (const e of h.events) counts[eventName(e)] = (counts[eventName(e)] ?? 0) + 1;
  return counts;
}

/**
 * Every execution of one workflow id with its events by type; a snapshot before and one after a
 * phase give the phase's events.
 */
export async function chainEvents(client: Client, workflowId: string): Promise<Record<string, number>> {
  return eventCounts(await chainHistories(client, workflowId));
}

/** after − before, per type (types that did not change are left out). */
export function diffCounts(
  after: Record<string, number>,
  before: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) !== 0) out[k] = v - (before[k] ?? 0);
  return out;
}

/** A workflow task that failed or timed out in some execution of a chain, with why. */
export interface TaskTrouble {
  runId: string;
  at: string;
  kind: 'failed' | 'timedOut';
  /** The server's cause (failed) or timeout type (timed out), and the failure's message. */
  cause: string;
  message: string;
}

/** Every workflow task of a chain (all executions, as `chainHistories` reads them) that failed or timed out. */
export function taskTrouble(histories: { runId: string; events: HistoryEvent[] }[]): TaskTrouble[] {
  const out: TaskTrouble[] = [];
  for (const { runId, events } of histories)
    for (const e of events as (HistoryEvent & Record<string, any>)[]) {
      const at = new Date(eventMs(e)).toISOString();
      const failed = e.workflowTaskFailedEventAttributes;
      const timedOut = e.workflowTaskTimedOutEventAttributes;
      if (failed)
        out.push({
          runId,
          at,
          kind: 'failed',
          cause: String(failed.cause ?? '?'),
          message: String(failed.failure?.message ?? '').slice(0, 300),
        });
      else if (timedOut)
        out.push({ runId, at, kind: 'timedOut', cause: String(timedOut.timeoutType ?? '?'), message: '' });
    }
  return out.sort((a, b) => a.at.localeCompare(b.at));
}
