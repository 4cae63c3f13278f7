import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { ExecutionEnd, RunEventSource, RunExecution } from '../contract/run-events';
import { quoteVisibilityString } from '../contract/visibility-quote';
import { type Page, ResumingPager } from './resuming-pager';
import { fleetRunsClause } from './run-queues';
import { listedRun } from './visibility';

const S = temporal.api.enums.v1.WorkflowExecutionStatus;
const ENDS = new Map<number, ExecutionEnd>([
  [S.WORKFLOW_EXECUTION_STATUS_RUNNING, 'running'],
  [S.WORKFLOW_EXECUTION_STATUS_COMPLETED, 'completed'],
  [S.WORKFLOW_EXECUTION_STATUS_FAILED, 'failed'],
  [S.WORKFLOW_EXECUTION_STATUS_CANCELED, 'cancelled'],
  [S.WORKFLOW_EXECUTION_STATUS_TERMINATED, 'terminated'],
  [S.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, 'timed_out'],
]);

/** Tenants per query (`TenantId IN (...)`), so a query stays short whatever the number of tenants. */
const TENANTS_PER_QUERY = 50;
const PAGE_SIZE = 500;
/**
 * Pages of gated runs read per pass; the next pass goes on from there (ResumingPager), so gates past
 * the first MAX_AWAITING_PAGES × PAGE_SIZE are announced within a few passes.
 */
const MAX_AWAITING_PAGES = 20;

const isoTime = (ms: number): string => quoteVisibilityString(new Date(ms).toISOString());

function executionOf(e: temporal.api.workflow.v1.IWorkflowExecutionInfo): RunExecution {
  const { runId, tenant, agent, priority, batchId, status } = listedRun(e);
  const memo = e.memo?.fields?.gateSeq;
  const gateSeq: unknown = memo ? defaultPayloadConverter.fromPayload(memo) : undefined;
  return {
    ...(typeof gateSeq === 'number' ? { gateSeq } : {}),
    runId,
    executionId: e.execution?.runId ?? '',
    tenant,
    agent,
    priority,
    batchId,
    status,
    end: ENDS.get(e.status ?? 0) ?? 'other',
    closedAt: optionalTsToMs(e.closeTime) ?? null,
  };
}

/** The webhooks' event source on Temporal visibility, over the fleet's runs (those on its task queues). */
export function createRunEventSource(
  client: Client,
  namespace: string,
  baseTaskQueue: string,
): RunEventSource {
  const listPage = async (query: string, token: Uint8Array | null): Promise<Page<RunExecution>> => {
    const res: temporal.api.workflowservice.v1.IListWorkflowExecutionsResponse =
      await client.workflowService.listWorkflowExecutions({
        namespace,
        query,
        pageSize: PAGE_SIZE,
        nextPageToken: token,
      });
    const next = res.nextPageToken && res.nextPageToken.length > 0 ? res.nextPageToken : null;
    return { items: (res.executions ?? []).map(executionOf), next };
  };
  const queries = (tenants: string[], clause: string): string[] => {
    const out: string[] = [];
    for (let i = 0; i < tenants.length; i += TENANTS_PER_QUERY) {
      const some = tenants.slice(i, i + TENANTS_PER_QUERY).map(quoteVisibilityString);
      out.push(`${fleetRunsClause(baseTaskQueue)} AND TenantId IN (${some.join(', ')}) AND ${clause}`);
    }
    return out;
  };
  const list = async (qs: string[], visit: (page: RunExecution[]) => Promise<void>) => {
    for (const query of qs) {
      let token: Uint8Array | null = null;
      do {
        const page = await listPage(query, token);
        await visit(page.items);
        token = page.next;
      } while (token);
    }
  };
  const awaiting = new ResumingPager(listPage, MAX_AWAITING_PAGES);
  return {
    closedBetween: (tenants, fromMs, toMs, visit) =>
      list(
        queries(
          tenants,
          `ExecutionStatus != 'Running' AND CloseTime >= ${isoTime(fromMs)} AND CloseTime < ${isoTime(toMs)}`,
        ),
        visit,
      ),
    awaitingApproval: (tenants, visit) =>
      awaiting.read(
        queries(tenants, `ExecutionStatus = 'Running' AND RunStatus = 'awaiting_approval'`),
        visit,
      ),
  };
}
