import type { RunView } from '../../contract/fleet-port';
import type { Agent } from '../../agent/define';
import type { z } from 'zod';
import { runLink } from '../intake/run-intake';
import type { ApprovalItem } from '../openapi/schemas';

/** A waiting gate as the run's view carries it (the run workflow records it when the gate opens). */
interface OpenGate {
  gateId?: number;
  proposal?: unknown;
  openedAt?: string;
  timeoutSeconds?: number;
  onTimeout?: 'approve' | 'reject' | 'escalate';
  timedOut?: true;
}

/** One entry of GET /v1/approvals, as the OpenAPI document describes it. */
export type ApprovalView = z.output<typeof ApprovalItem>;

/** One entry of GET /v1/approvals: the run and its gate, the agent's declared policy where the view says nothing. */
export function approvalView(view: RunView, agent: Agent | undefined): ApprovalView {
  const gate = (view.gate ?? {}) as OpenGate;
  const seconds = gate.timeoutSeconds ?? agent?.gate?.timeoutSeconds;
  const onTimeout = gate.onTimeout ?? agent?.gate?.onTimeout;
  const openedAt = gate.openedAt ?? null;
  const opened = openedAt === null ? Number.NaN : Date.parse(openedAt);
  const link = runLink(view.runId);
  return {
    runId: view.runId,
    tenant: view.tenant,
    agent: view.agent,
    priority: view.priority,
    createdAt: view.createdAt,
    gateId: gate.gateId ?? null,
    proposal: gate.proposal ?? null,
    openedAt,
    timeout:
      seconds === undefined || onTimeout === undefined
        ? null
        : {
            seconds,
            onTimeout,
            expiresAt: Number.isFinite(opened) ? new Date(opened + seconds * 1000).toISOString() : null,
          },
    links: { run: link, approve: `${link}/approve`, reject: `${link}/reject` },
  };
}
