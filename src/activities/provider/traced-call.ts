import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { CALL_KEY_HEADER } from './call-key';

/** The W3C Trace Context header a traced call carries to the provider. */
export const TRACEPARENT_HEADER = 'traceparent';

/** The model call's span attributes besides OpenTelemetry's HTTP ones (docs/operating.md#traces). */
export const CALL_KEY_ATTRIBUTE = 'fairway.call_key';

/**
 * One provider call as a client span (`POST <path>`, a child of the activity's span): the call goes
 * out with the span's `traceparent` among its headers, and a failure marks the span with its type.
 */
export function tracedCall<R>(
  tracer: Tracer,
  call: { url: string; headers: Record<string, string> },
  send: (headers: Record<string, string>) => Promise<R>,
): Promise<R> {
  const url = new URL(call.url);
  const key = call.headers[CALL_KEY_HEADER];
  return tracer.startActiveSpan(
    `POST ${url.pathname}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'url.full': `${url.origin}${url.pathname}`,
        'server.address': url.hostname,
        ...(url.port ? { 'server.port': Number(url.port) } : {}),
        ...(key ? { [CALL_KEY_ATTRIBUTE]: key } : {}),
      },
    },
    async (span) => {
      const headers = { ...call.headers };
      propagation.inject(context.active(), headers);
      try {
        const out = await send(headers);
        span.setStatus({ code: SpanStatusCode.OK });
        return out;
      } catch (err) {
        const type = (err as { type?: unknown }).type;
        span.setAttribute('error.type', typeof type === 'string' ? type : (err as Error).name);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}
