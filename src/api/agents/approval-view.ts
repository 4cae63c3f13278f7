import type { RunView } from '../../contract/fleet-port';
import type { Agent } from '../../agent/define';
import { runLink } from '../intake/run-intake';

/** A waiting gate as the run's view carries it (the run workflow records it when the gate opens). */
interface OpenGate {
  proposal?: unknown;
  openedAt?: string;
  timeoutSeconds?: number;
  onTimeout?: 'approve' | 'reject' | 'escalate';
  timedOut?: true;
}

export interface ApprovalView {
  runId: string;
  tenant: string;
  agent: string;
  priority: RunView['priority'];
  createdAt: string;
  /** What is to be approved; null when the run's view does not carry it (a run begun before gates had proposals). */
  proposal: unknown;
  /** When the gate opened (ISO 8601); null when unknown. */
  openedAt: string | null;
  /** How long a human may take and what happens then; `expiresAt` once the gate's opening is known. */
  timeout: {
    seconds: number;
    onTimeout: 'approve' | 'reject' | 'escalate';
    expiresAt: string | null;
  } | null;
  links: { run: string; approve: string; reject: string };
}

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
