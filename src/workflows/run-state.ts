import { upsertSearchAttributes } from '@temporalio/workflow';
import type { GateDecision } from '../agent/define';
import type { RunGateView, RunSpec, RunStatus, RunView } from '../contract/fleet-port';
import { RunStatusKey } from '../contract/search-attributes';
import type { ToolCallView } from '../contract/tool-registry';
import type { AdmitNotice, DecisionMessage } from '../contract/run-messages';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A run's observable state: what the `runView` query answers and what the Web UI filters on. */
export class RunState {
  status: RunStatus = 'queued';
  attempt = 0;
  admission: AdmitNotice | null = null;
  firstAdmission: AdmitNotice | null = null;
  revoked = false;
  /** Highest attempt revoked before its admission arrived: that admission comes already revoked. */
  revokedEarly = -1;
  cancelRequested = false;
  /** The open gate's decision, once taken (a human's, or its timeout's). */
  decision: GateDecision | null = null;
  /** The run's latest gate as its view shows it (null: it opened none). */
  gate: RunGateView | null = null;
  /** Gates the run opened: the open gate's `gateId`. */
  gates = 0;
  /** Tokens used over the whole run, and in the current attempt (what the next release settles). */
  usage = 0;
  attemptUsage = 0;
  /**
   * Per-step reservation: what the current attempt's lease holds in the ledger (the admission's
   * `reserved`, raised by top-ups), what this run last offered as its cost (the reservation when an
   * older scheduler's notice does not say), and the worst cases of its steps under way.
   */
  reserved = 0;
  offeredCost: number;
  stepsWorst = 0;
  finishedAt: number | null = null;
  result: unknown = null;
  error: { code: string; message: string } | null = null;
  /** Every tool call, refused ones included: the tool, the identity it acted as, the outcome. */
  toolCalls: ToolCallView[] = [];

  constructor(readonly spec: RunSpec) {
    this.offeredCost = Math.max(1, spec.estimatedTokens);
    this.attempt = spec.firstAttempt ?? 0;
  }

  /** Tokens the current attempt's reservation still covers beyond what it used and what its steps may use. */
  get uncovered(): number {
    return this.attemptUsage + this.stepsWorst - this.reserved;
  }

  admit(notice: AdmitNotice): void {
    if (notice.attempt !== this.attempt || this.admission) return; // duplicate or stale notice
    if (this.finishedAt !== null) return; // a finished run refuses every admission
    this.admission = notice;
    this.firstAdmission ??= notice;
    this.revoked = notice.attempt <= this.revokedEarly;
    this.attemptUsage = 0;
    this.reserved = notice.reserved ?? this.offeredCost;
  }

  revoke(attempt: number): void {
    if (attempt === this.attempt && this.admission) this.revoked = true;
    // Notices travel by separate activities: a revoke may overtake its admit. Remember it.
    else if (attempt >= this.attempt) this.revokedEarly = Math.max(this.revokedEarly, attempt);
  }

  /** Starts a new attempt: the run queues again and waits for a fresh admission. */
  requeue(): void {
    this.attempt++;
    this.admission = null;
    this.revoked = false;
    this.attemptUsage = 0;
  }

  used(tokens: number): void {
    this.usage += tokens;
    this.attemptUsage += tokens;
  }

  /**
   * Opens a gate: its view replaces the last gate's, and it waits for a decision of its own. Returns
   * its `gateId`, the run's count of gates so far.
   */
  openGate(gate: Omit<RunGateView, 'gateId'>): number {
    this.gates++;
    this.gate = { gateId: this.gates, ...gate };
    this.decision = null;
    return this.gates;
  }

  /** True when a gate waits for a decision. */
  private get awaitsDecision(): boolean {
    return this.status === 'awaiting_approval' && !this.decision && this.gate !== null;
  }

  /** True when `d` names a gate other than the one waiting (which a decision naming none would decide). */
  namesOtherGate(d: DecisionMessage): boolean {
    return this.awaitsDecision && d.gateId !== undefined && d.gateId !== this.gate?.gateId;
  }

  /**
   * Records a human's decision of the open gate; false when no gate waits or it was decided already.
   * It does not check `d.gateId`: the signal handler refuses another gate's decision first, by patch.
   */
  decide(d: DecisionMessage, now: number): boolean {
    if (!this.awaitsDecision) return false;
    const at = d.at ?? new Date(now).toISOString();
    this.settle({ decision: d.decision, note: d.note, by: d.by ?? 'unknown', at, timedOut: false });
    return true;
  }

  /** The gate's timeout passed undecided: it takes its `onTimeout` (escalate acts, as approve does). */
  timeOut(now: number): void {
    const outcome = this.gate?.onTimeout ?? 'reject';
    this.settle({
      decision: outcome === 'reject' ? 'reject' : 'approve',
      note: `gate timed out: ${outcome}`,
      by: 'timeout',
      at: new Date(now).toISOString(),
      timedOut: true,
    });
    if (this.gate) this.gate = { ...this.gate, timedOut: true, outcome };
  }

  private settle(d: GateDecision): void {
    this.decision = d;
    if (!this.gate) return;
    this.gate = {
      ...this.gate,
      decision: d.decision,
      decidedBy: d.by,
      decidedAt: d.at,
      ...(d.note !== undefined ? { note: d.note } : {}),
    };
  }

  transition(status: RunStatus, now: number): void {
    if (this.status === status) return;
    this.status = status;
    if (status === 'completed' || status === 'failed' || status === 'cancelled') this.finishedAt = now;
    upsertSearchAttributes([{ key: RunStatusKey, value: status }]);
  }

  view(): RunView {
    const s = this.spec;
    return {
      runId: s.runId,
      tenant: s.tenant,
      agent: s.agent,
      priority: s.priority,
      status: this.status,
      createdAt: s.createdAt,
      admittedAt: iso(this.firstAdmission?.admittedAt ?? null),
      admissionSeq: this.firstAdmission?.seq ?? null,
      finishedAt: iso(this.finishedAt),
      usage: { tokens: this.usage },
      waitingOn: null,
      result: this.result,
      error: this.error,
      batchId: s.batchId ?? null,
      toolCalls: this.toolCalls,
      ...(this.gate ? { gate: this.gate } : {}),
    };
  }
}
