import type { BatchView } from '../../contract/fleet-port';
import type { RunExecution } from '../../contract/run-events';
import type { OutboxEvent, WebhookEventType } from '../../stores/webhooks/webhooks';
import { eventIdOf } from './signing';

/** The type of event a closed execution makes: completed, or failed (by the run or by Temporal); else none. */
export function closeTypeOf(e: RunExecution): WebhookEventType | null {
  if (e.end === 'running' || e.end === 'other') return null;
  if (e.status === 'completed') return 'run.completed';
  if (e.status === 'cancelled' || e.end === 'cancelled') return null;
  if (e.status === 'failed' || e.end === 'failed' || e.end === 'terminated' || e.end === 'timed_out')
    return 'run.failed';
  return null;
}

/** The body every delivery of the event sends (Standard Webhooks' `type`, `timestamp`, `data`). */
const bodyOf = (type: WebhookEventType, at: number, data: Record<string, unknown>): string =>
  JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });

const runData = (e: RunExecution) => ({
  runId: e.runId,
  executionId: e.executionId,
  tenant: e.tenant,
  agent: e.agent,
  priority: e.priority,
  status: e.status,
  batchId: e.batchId,
});

/** The event of a closed execution, or null when its end is not announced (cancelled). */
export function closeEvent(e: RunExecution): OutboxEvent | null {
  const type = closeTypeOf(e);
  if (!type || e.closedAt === null) return null;
  return {
    eventId: eventIdOf(e.tenant, type, e.runId, e.executionId),
    tenant: e.tenant,
    type,
    occurredAt: e.closedAt,
    body: bodyOf(type, e.closedAt, { ...runData(e), status: type === 'run.failed' ? 'failed' : e.status }),
  };
}

/**
 * The event of an execution waiting at a gate: one per gate of the execution (`gateSeq`), dated when
 * first seen (`now`). A first gate keeps the id it had before gates were numbered (an execution
 * that writes no sequence is at its first gate, as far as the scan can tell), so it is not announced
 * again.
 */
export function awaitingEvent(e: RunExecution, now: number): OutboxEvent {
  const type = 'run.awaiting_approval';
  const gate = e.gateSeq ?? 1;
  return {
    eventId:
      gate === 1
        ? eventIdOf(e.tenant, type, e.runId, e.executionId)
        : eventIdOf(e.tenant, type, e.runId, e.executionId, `gate-${gate}`),
    tenant: e.tenant,
    type,
    occurredAt: now,
    body: bodyOf(type, now, { ...runData(e), ...(e.gateSeq !== undefined ? { gateId: e.gateSeq } : {}) }),
  };
}

/**
 * The event of a batch none of whose items is queued or running, or null. One per outcome (the
 * counts): a resumed batch that finishes again with other counts is announced again.
 */
export function batchEvent(b: BatchView, at: number): OutboxEvent | null {
  if (b.total === 0 || b.queued > 0 || b.running > 0) return null;
  const type = 'batch.completed';
  const { batchId, tenant, total, completed, failed, cancelled } = b;
  return {
    eventId: eventIdOf(tenant, type, batchId, String(completed), String(failed), String(cancelled)),
    tenant,
    type,
    occurredAt: at,
    body: bodyOf(type, at, { batchId, tenant, total, completed, failed, cancelled }),
  };
}
