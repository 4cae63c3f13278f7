import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { RunListItem, RunListQuery, RunStatus, RunView } from '../contract/fleet-port';
import type { Priority } from '../scheduler/types';
import { quoteVisibilityString } from '../contract/visibility-quote';
import { RunStatusKey } from '../contract/search-attributes';
import { fleetRunsClause } from './run-queues';

type Payloads = Record<string, temporal.api.common.v1.IPayload> | null | undefined;
/** A search attribute's or memo field's value (a keyword list's first). */
const decode = (fields: Payloads, key: string): unknown => {
  const p = fields?.[key];
  if (!p) return undefined;
  const v: unknown = defaultPayloadConverter.fromPayload(p);
  return Array.isArray(v) ? v[0] : v;
};
const quote = quoteVisibilityString;

/** What a run's search attributes and memo say of it, as a visibility listing shows them. */
export function listedRun(e: temporal.api.workflow.v1.IWorkflowExecutionInfo): RunListItem {
  const sa = e.searchAttributes?.indexedFields;
  const memo = e.memo?.fields;
  return {
    runId: e.execution?.workflowId ?? '',
    tenant: String(decode(sa, 'TenantId') ?? ''),
    agent: String(decode(memo, 'agent') ?? decode(sa, 'AgentName') ?? ''),
    priority: (decode(sa, 'Priority') ?? 'standard') as Priority,
    status: (decode(sa, 'RunStatus') ?? 'queued') as RunStatus,
    createdAt: String(decode(memo, 'createdAt') ?? ''),
    batchId: (decode(sa, 'BatchId') as string | undefined) ?? null,
  };
}

/**
 * Lists the fleet's runs (those on its task queues: another fleet may share the namespace) from
 * Temporal visibility (search attributes + memo), by page token: open executions newest first,
 * then closed ones by close time, newest first. A run that closes between two pages moves from the
 * first part to the second and may be listed again; none is skipped.
 */
export async function listRuns(
  client: Client,
  namespace: string,
  baseTaskQueue: string,
  q: RunListQuery,
): Promise<{ items: RunListItem[]; nextCursor: string | null }> {
  const clauses = [fleetRunsClause(baseTaskQueue)];
  if (q.tenant) clauses.push(`TenantId = ${quote(q.tenant)}`);
  if (q.status) clauses.push(`RunStatus = ${quote(q.status)}`);
  if (q.priority) clauses.push(`Priority = ${quote(q.priority)}`);
  if (q.agent) clauses.push(`AgentName = ${quote(q.agent)}`);
  if (q.runId) clauses.push(`WorkflowId = ${quote(q.runId)}`);
  if (q.createdAfter) clauses.push(`StartTime >= ${quote(q.createdAfter)}`);
  if (q.createdBefore) clauses.push(`StartTime < ${quote(q.createdBefore)}`);
  const res = await client.workflowService.listWorkflowExecutions({
    namespace,
    query: clauses.join(' AND '),
    pageSize: q.limit,
    nextPageToken: q.cursor ? Buffer.from(q.cursor, 'base64url') : null,
  });
  const items = (res.executions ?? []).map(listedRun);
  const token = res.nextPageToken;
  return { items, nextCursor: token && token.length > 0 ? Buffer.from(token).toString('base64url') : null };
}

const RUN_STATUSES: RunStatus[] = [
  'queued',
  'running',
  'awaiting_approval',
  'completed',
  'failed',
  'cancelled',
];

/**
 * Counts a batch's runs by status from visibility. Each item counts once, by its newest execution: a
 * resumed item's failed execution stays listed beside the new one, so when the executions outnumber the
 * items (the batch was resumed) the counts come from the newest execution of each run instead.
 */
export async function countBatch(
  client: Client,
  batchId: string,
  total: number,
): Promise<Record<RunStatus, number>> {
  const counts = await Promise.all(
    RUN_STATUSES.map((s) => client.workflow.count(`BatchId = ${quote(batchId)} AND RunStatus = '${s}'`)),
  );
  const quick = Object.fromEntries(RUN_STATUSES.map((s, i) => [s, counts[i]?.count ?? 0])) as Record<
    RunStatus,
    number
  >;
  if (Object.values(quick).reduce((a, b) => a + b, 0) <= total) return quick;
  const exact = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  for (const status of (await newestExecutions(client, batchId)).values()) exact[status]++;
  return exact;
}

/** Each of a batch's runs (workflow id) with the status of its newest execution. */
async function newestExecutions(client: Client, batchId: string): Promise<Map<string, RunStatus>> {
  const newest = new Map<string, { at: number; status: RunStatus }>();
  for await (const wf of client.workflow.list({ query: `BatchId = ${quote(batchId)}` })) {
    const at = wf.startTime.getTime();
    const status = (wf.typedSearchAttributes.get(RunStatusKey) ?? 'queued') as RunStatus;
    const seen = newest.get(wf.workflowId);
    if (!seen || at >= seen.at) newest.set(wf.workflowId, { at, status });
  }
  return new Map([...newest].map(([id, v]) => [id, v.status]));
}

/**
 * Ids of a batch's failed runs (for re-driving them): those whose newest execution failed, so a run
 * already resumed (running again, or completed) is never re-driven twice.
 */
export async function failedRunIds(client: Client, batchId: string): Promise<string[]> {
  const failed = new Set<string>();
  for await (const wf of client.workflow.list({
    query: `BatchId = ${quote(batchId)} AND RunStatus = 'failed'`,
  })) {
    failed.add(wf.workflowId);
  }
  if (failed.size === 0) return [];
  const newest = await newestExecutions(client, batchId);
  return [...failed].filter((id) => newest.get(id) === 'failed');
}

/** The fairness key a run's memo carries (runs started since it does); null: none there. */
export function fairnessKeyOf(d: WorkflowExecutionDescription): string | null {
  const key = decode(d.raw.workflowExecutionInfo?.memo?.fields, 'fairnessKey');
  return typeof key === 'string' ? key : null;
}

/** A run's view from its description alone (search attributes and memo), before any worker ran it. */
export function viewFromDescription(d: WorkflowExecutionDescription): RunView {
  const sa = d.raw.workflowExecutionInfo?.searchAttributes?.indexedFields;
  const memo = d.raw.workflowExecutionInfo?.memo?.fields;
  return {
    runId: d.workflowId,
    tenant: String(decode(sa, 'TenantId') ?? ''),
    agent: String(decode(memo, 'agent') ?? ''),
    priority: (decode(sa, 'Priority') ?? 'standard') as Priority,
    status: (decode(sa, 'RunStatus') ?? 'queued') as RunStatus,
    createdAt: String(decode(memo, 'createdAt') ?? d.startTime.toISOString()),
    admittedAt: null,
    admissionSeq: null,
    finishedAt: d.closeTime ? d.closeTime.toISOString() : null,
    usage: { tokens: 0 },
    waitingOn: null,
    result: null,
    error: null,
    batchId: (decode(sa, 'BatchId') as string | undefined) ?? null,
    fairnessKey: fairnessKeyOf(d),
    toolCalls: [],
  };
}
