/**
 * The workflow interceptors of tracing (bundled into every workflow bundle, see
 * `workflowInterceptorModules` in src/fleet/worker.ts): Temporal's OpenTelemetry interceptors, for
 * a workflow whose start carried a trace (an API with tracing on) only. Any other workflow (tracing
 * off, the scheduler, histories recorded before tracing) runs through them untouched. They add
 * spans and headers, never a command.
 */
import * as otel from '@opentelemetry/api';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import type {
  ActivityInput,
  ContinueAsNewInput,
  LocalActivityInput,
  Next,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { workflowInfo } from '@temporalio/workflow';
import type { AdmitNotice } from '../contract/run-messages';
import type { RunStart } from '../contract/admit-notice';
import type { RunSpec } from '../contract/fleet-port';

const ADMIT_SIGNAL = 'admit';

/** The span attributes Fairway adds (docs/operating.md#traces). */
export const SPAN_ATTRIBUTES = {
  runId: 'fairway.run_id',
  tenant: 'fairway.tenant',
  agent: 'fairway.agent',
  lane: 'fairway.lane',
  attempt: 'fairway.attempt',
  admissionSeq: 'fairway.admission.seq',
  reservedTokens: 'fairway.admission.reserved_tokens',
  leaseExpiresAt: 'fairway.admission.lease_expires_at',
} as const;
/** The span of the scheduler's admission of one attempt, from the run's start to its admission (at its start when decided first). */
export const ADMISSION_SPAN = 'SchedulerAdmission';

const A = SPAN_ATTRIBUTES;

/** Temporal's inbound interceptor, which also records the scheduler's admissions in the run's trace. */
class TracedRun extends OpenTelemetryInboundInterceptor {
  private runContext: otel.Context | undefined;

  override execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    return super.execute(input, (i) => {
      this.runContext = otel.context.active();
      const span = otel.trace.getSpan(this.runContext);
      if (workflowInfo().workflowType !== 'runWorkflow') return next(i);
      const spec = i.args[0] as Partial<RunSpec> | undefined;
      if (span && spec)
        span.setAttributes({
          [A.runId]: workflowInfo().workflowId,
          ...(spec.tenant ? { [A.tenant]: spec.tenant } : {}),
          ...(spec.agent ? { [A.agent]: spec.agent } : {}),
          ...(spec.priority ? { [A.lane]: spec.priority } : {}),
        });
      // Decided first: the run starts with its admission (runWorkflow's third argument).
      const admission = (i.args[2] as Partial<RunStart> | undefined)?.admission;
      if (admission) this.admittedWith(admission);
      return next(i);
    });
  }

  /** The scheduler's `admit` carries no trace (one scheduler serves every run): it is recorded here. */
  admitted(input: SignalInput): void {
    this.admittedWith(input.args[0] as Partial<AdmitNotice> | undefined);
  }

  private admittedWith(notice: Partial<AdmitNotice> | undefined): void {
    if (this.runContext === undefined || typeof notice?.admittedAt !== 'number') return;
    const span = this.tracer.startSpan(
      ADMISSION_SPAN,
      {
        startTime: workflowInfo().runStartTime,
        attributes: {
          [A.runId]: workflowInfo().workflowId,
          ...(typeof notice.attempt === 'number' ? { [A.attempt]: notice.attempt } : {}),
          ...(typeof notice.seq === 'number' ? { [A.admissionSeq]: notice.seq } : {}),
          ...(typeof notice.reserved === 'number' ? { [A.reservedTokens]: notice.reserved } : {}),
          ...(typeof notice.leaseExpiresAt === 'number'
            ? { [A.leaseExpiresAt]: new Date(notice.leaseExpiresAt).toISOString() }
            : {}),
        },
      },
      this.runContext,
    );
    span.end(new Date(Math.max(notice.admittedAt, workflowInfo().runStartTime.getTime())));
  }
}

const carriesTrace = (input: { headers: Record<string, unknown> }) => TRACE_HEADER in input.headers;

export const interceptors = (): WorkflowInterceptors => {
  // Per workflow: traced once its start carried a trace header (replay sees the same headers).
  let traced = false;
  let run: TracedRun | undefined;
  let out: OpenTelemetryOutboundInterceptor | undefined;
  const inbound = () => (run ??= new TracedRun());
  const outbound = () => (out ??= new OpenTelemetryOutboundInterceptor());
  const inbounds: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      if (!carriesTrace(input)) return next(input);
      traced = true;
      return inbound().execute(input, next);
    },
    handleSignal(input, next) {
      if (carriesTrace(input)) return inbound().handleSignal(input, next);
      if (traced && input.signalName === ADMIT_SIGNAL) inbound().admitted(input);
      return next(input);
    },
    handleUpdate(input: UpdateInput, next) {
      return carriesTrace(input) ? inbound().handleUpdate(input, next) : next(input);
    },
  };
  const outbounds: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input: ActivityInput, next) =>
      traced ? outbound().scheduleActivity(input, next) : next(input),
    scheduleLocalActivity: (input: LocalActivityInput, next) =>
      traced ? outbound().scheduleLocalActivity(input, next) : next(input),
    startChildWorkflowExecution: (input: StartChildWorkflowExecutionInput, next) =>
      traced ? outbound().startChildWorkflowExecution(input, next) : next(input),
    signalWorkflow: (input: SignalWorkflowInput, next) =>
      traced ? outbound().signalWorkflow(input, next) : next(input),
    continueAsNew: (input: ContinueAsNewInput, next) =>
      traced ? outbound().continueAsNew(input, next) : next(input),
    getLogAttributes: (input, next) => (traced ? outbound().getLogAttributes(input, next) : next(input)),
  };
  const internals = new OpenTelemetryInternalsInterceptor();
  return {
    inbound: [inbounds],
    outbound: [outbounds],
    internals: [{ dispose: (input, next) => (traced ? internals.dispose(input, next) : next(input)) }],
  };
};
