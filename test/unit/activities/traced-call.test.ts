import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { createModelClient } from '../../../src/activities/model-client';
import { startTracing } from '../../../src/fleet/tracing';

const answer = () =>
  new Response(JSON.stringify({ usage: { total_tokens: 40 } }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });

describe('model calls under tracing', () => {
  const spans = new InMemorySpanExporter();
  const tracing = startTracing({ endpoint: undefined, serviceName: 't' }, new SimpleSpanProcessor(spans))!;
  afterAll(() => tracing.shutdown());

  it('is off without an endpoint', () => {
    expect(startTracing({ endpoint: undefined, serviceName: 'fairway' })).toBeUndefined();
  });

  it("sends the call span's traceparent to the provider, under the caller's span", async () => {
    const sent: Headers[] = [];
    const client = createModelClient({
      baseUrl: 'http://sim.test:4000',
      model: 'm',
      onObservation: () => undefined,
      tracer: tracing.tracer,
      fetchImpl: async (_url, init) => {
        sent.push(new Headers(init?.headers));
        return answer();
      },
    });
    await tracing.tracer.startActiveSpan('activity', async (parent) => {
      await client.complete({ runId: 'r1', step: 1, tokens: 40 });
      parent.end();
    });
    const call = spans.getFinishedSpans().find((s) => s.name === 'POST /v1/chat/completions')!;
    const parent = spans.getFinishedSpans().find((s) => s.name === 'activity')!;
    expect(call.parentSpanId).toBe(parent.spanContext().spanId);
    expect(call.attributes['fairway.call_key']).toBe('r1:1');
    expect(call.attributes['server.port']).toBe(4000);
    const { traceId, spanId } = call.spanContext();
    expect(sent[0]!.get('traceparent')).toBe(`00-${traceId}-${spanId}-01`);
  });

  it('sends no traceparent untraced', async () => {
    const sent: Headers[] = [];
    const client = createModelClient({
      baseUrl: 'http://sim.test:4000',
      model: 'm',
      onObservation: () => undefined,
      fetchImpl: async (_url, init) => {
        sent.push(new Headers(init?.headers));
        return answer();
      },
    });
    await tracing.tracer.startActiveSpan('activity', async (parent) => {
      await client.complete({ runId: 'r2', step: 1, tokens: 40 });
      parent.end();
    });
    expect(sent[0]!.get('traceparent')).toBeNull();
  });
});
