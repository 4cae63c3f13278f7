import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { matchRoute } from '../openapi/route-match';

/**
 * A server span per request (`<METHOD> <route template>`), continuing the caller's trace when its
 * request carries a W3C `traceparent`. What the request does (the run it starts, the scheduler
 * message it sends) runs inside the span, so Temporal's client interceptors carry the trace on.
 */
export function traceRequests(tracer: Tracer): RequestHandler {
  return (req, res, next) => {
    const parent = propagation.extract(context.active(), req.headers);
    // A name per route template, never per URL.
    const route = matchRoute(req.path)?.template;
    const span = tracer.startSpan(
      route ? `${req.method} ${route}` : req.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          'url.path': req.path,
          ...(route ? { 'http.route': route } : {}),
        },
      },
      parent,
    );
    let open = true;
    const end = () => {
      if (!open) return;
      open = false;
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (!res.writableFinished) span.setAttribute('fairway.http.aborted', true);
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    context.with(trace.setSpan(parent, span), next);
  };
}
