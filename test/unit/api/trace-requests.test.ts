import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { context, trace } from '@opentelemetry/api';
import express from 'express';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { traceRequests } from '../../../src/api/middleware/trace-requests';
import { startTracing } from '../../../src/fleet/tracing';

describe('request spans', () => {
  const spans = new InMemorySpanExporter();
  const tracing = startTracing({ endpoint: undefined, serviceName: 't' }, new SimpleSpanProcessor(spans))!;
  afterAll(() => tracing.shutdown());
  const app = express();
  app.use(traceRequests(tracing.tracer));
  // What the handler does runs inside the request's span (a Temporal client call would carry it).
  app.get('/v1/runs/:id', async (_req, res) => {
    await new Promise((r) => setTimeout(r, 1));
    res.json({ active: trace.getSpan(context.active())?.spanContext().spanId ?? null });
  });

  it("names the span by route template, continues the caller's traceparent, and is active in the handler", async () => {
    const traceId = 'a'.repeat(32);
    const caller = 'b'.repeat(16);
    const r = await request(app).get('/v1/runs/run-1').set('traceparent', `00-${traceId}-${caller}-01`);
    expect(r.status).toBe(200);
    const span = spans.getFinishedSpans().find((s) => s.name === 'GET /v1/runs/{runId}')!;
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanId).toBe(caller);
    expect(span.attributes['http.response.status_code']).toBe(200);
    expect(span.attributes['url.path']).toBe('/v1/runs/run-1');
    expect(r.body.active).toBe(span.spanContext().spanId);
  });
});
