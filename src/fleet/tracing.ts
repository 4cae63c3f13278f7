import { context, trace } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { ClientInterceptors, WorkflowClientInterceptor } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import type { InjectedSinks, WorkerOptions } from '@temporalio/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow';

/** Where a process's spans go: OTLP/HTTP when an endpoint is configured. */
export interface TracingConfig {
  endpoint: string | undefined;
  serviceName: string;
}

/**
 * A process's tracing: its tracer, and the Temporal interceptors that carry the trace from a client
 * call into workflows (their module: src/workflows/tracing-interceptors.ts), activities and back.
 * Only work that is already in a trace is traced: a client call outside any span (the watchdog, the
 * mailbox's reports), an activity or a workflow started without a trace header stays untraced.
 */
export interface Tracing {
  tracer: Tracer;
  /** For `new Client({ interceptors })`. */
  clientInterceptors: ClientInterceptors;
  /** For `Worker.create`: the activity interceptors and the sink workflow spans are exported through. */
  worker: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * The workflow spans' sink on a worker without tracing: a traced run (an API with tracing on) on
 * such a worker drops its workflow spans instead of logging an unregistered sink on every task.
 */
export const untracedWorkerSinks: InjectedSinks<OpenTelemetrySinks> = {
  exporter: { export: { fn: () => undefined } },
};

/**
 * Starts tracing as configured: undefined (and nothing installed) without an endpoint. `processor`
 * replaces the OTLP exporter (tests). The context manager and the W3C propagator are the process's
 * (OpenTelemetry's globals, registered once); the tracer is this instance's.
 */
export function startTracing(config: TracingConfig, processor?: SpanProcessor): Tracing | undefined {
  if (config.endpoint === undefined && processor === undefined) return undefined;
  const resource = new Resource({ 'service.name': config.serviceName });
  const spans =
    processor ??
    new BatchSpanProcessor(
      new OTLPTraceExporter({ url: `${(config.endpoint ?? '').replace(/\/+$/, '')}/v1/traces` }),
    );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spans] });
  // A second registration in one process keeps the first context manager and propagator (the same kinds).
  provider.register();
  const tracer = provider.getTracer('fairway');
  const client = new OpenTelemetryWorkflowClientInterceptor({ tracer });
  return {
    tracer,
    clientInterceptors: { workflow: [inTraceOnly(client)] },
    worker: {
      interceptors: {
        activity: [
          (ctx) => ({
            inbound: {
              execute: (input, next) =>
                TRACE_HEADER in input.headers
                  ? new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }).execute(input, next)
                  : next(input),
            },
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      },
      sinks: { exporter: makeWorkflowExporter(spans, resource) } satisfies InjectedSinks<OpenTelemetrySinks>,
    },
    shutdown: () => provider.shutdown(),
  };
}

/** Temporal's client interceptor for the calls that start or message a workflow, inside a trace only. */
function inTraceOnly(otel: OpenTelemetryWorkflowClientInterceptor): WorkflowClientInterceptor {
  const traced = () => trace.getSpan(context.active()) !== undefined;
  return {
    start: (input, next) => (traced() ? otel.start(input, next) : next(input)),
    startWithDetails: (input, next) => (traced() ? otel.startWithDetails(input, next) : next(input)),
    signal: (input, next) => (traced() ? otel.signal(input, next) : next(input)),
    signalWithStart: (input, next) => (traced() ? otel.signalWithStart(input, next) : next(input)),
    startUpdate: (input, next) => (traced() ? otel.startUpdate(input, next) : next(input)),
    startUpdateWithStart: (input, next) => (traced() ? otel.startUpdateWithStart(input, next) : next(input)),
  };
}
