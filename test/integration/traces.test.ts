import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { workflowSource } from '../../src/fleet/worker';
import { startOtlpReceiver } from '../support/otlp-receiver';
import type { ReceivedSpan } from '../support/otlp-receiver';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * Tracing on the real stack (API, worker and simulator in this process; the shared dev server),
 * exported over OTLP/HTTP to a receiver standing in for a collector: one run's trace, from the
 * caller's request to the provider's call, is one trace id.
 */
describe('traces', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let s: TestStack | undefined;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    s = await startTestStack({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'fairway-it' });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    await receiver?.close();
  });

  it('one trace covers the request, the scheduler admission, the run workflow, its activities and the model call the provider saw', async () => {
    const stack = s!;
    const key = await stack.tenant(`traces-${stack.id}`);
    // The caller's own trace: the API continues it.
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const submitted = await stack.call('POST', '/v1/runs', {
      token: key,
      headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
      body: { agent: 'synthetic', input: { steps: 2, tokensPerStep: 50 } },
    });
    expect(submitted.status).toBe(202);
    const runId: string = submitted.body.runId;
    await waitFor(
      () => stack.call('GET', `/v1/runs/${runId}`, { token: key }),
      (r) => r.body?.status === 'completed',
      30_000,
    );
    // Measured where the work happens: what the provider received with each of the run's calls.
    const seen = stack.sim!.state.traces.ofRun(runId);
    // The traced history replays on the suite's bundle (which holds the tracing interceptors); with
    // FAIRWAY_RECORD_FIXTURES=1 it is kept as a replay fixture (replayed there without them too).
    const history = await stack.client.workflow.getHandle(runId).fetchHistory();
    const replay = await Worker.runReplayHistory(workflowSource(inject('workflowBundlePath')), history, runId)
      .then(() => undefined)
      .catch((err: unknown) => err);
    expect(replay).toBeUndefined();
    if (process.env.FAIRWAY_RECORD_FIXTURES === '1')
      writeFileSync(
        path.join(__dirname, '..', 'fixtures', 'histories', 'run-traced.pb'),
        temporal.api.history.v1.History.encode(history).finish(),
      );
    // Closing the stack stops tracing last, which sends every span still buffered.
    await stack.close();
    s = undefined;

    const spans = receiver.spans.filter((x) => x.traceId === traceId);
    const names = spans.map((x) => x.name);
    const one = (name: string, where: (x: ReceivedSpan) => boolean = () => true) => {
      const found = spans.filter((x) => x.name === name && where(x));
      expect(found.length, `${name} in ${JSON.stringify(names)}`).toBeGreaterThanOrEqual(1);
      return found[0]!;
    };
    const api = one('POST /v1/runs');
    expect(api.parentSpanId).toBe(callerSpan);
    expect(api.service).toBe('fairway-it');
    expect(api.attributes['http.response.status_code']).toBe(202);
    // The offer to the scheduler, and the scheduler taking it.
    const offer = one('StartWorkflowUpdate:submit');
    expect(offer.parentSpanId).toBe(api.spanId);
    const taken = one('HandleUpdate:submit');
    expect(taken.parentSpanId).toBe(offer.spanId);
    expect(taken.attributes.workflowType).toBe('schedulerWorkflow');
    const start = one('StartWorkflow:runWorkflow');
    expect(start.parentSpanId).toBe(api.spanId);
    const run = one('RunWorkflow:runWorkflow');
    expect(run.parentSpanId).toBe(start.spanId);
    expect(run.attributes['fairway.run_id']).toBe(runId);
    expect(run.attributes['fairway.lane']).toBe('standard');
    const admission = one('SchedulerAdmission');
    expect(admission.parentSpanId).toBe(run.spanId);
    expect(admission.attributes['fairway.attempt']).toBeTypeOf('number');
    // Each model call: a client span under an activity run of this workflow, its traceparent the one
    // the provider received.
    const activities = new Map(
      spans.filter((x) => x.name.startsWith('RunActivity:')).map((x) => [x.spanId, x]),
    );
    const calls = spans.filter((x) => x.name === 'POST /v1/chat/completions');
    expect(calls.length, JSON.stringify(names)).toBe(2);
    expect(Object.keys(seen)).toHaveLength(2);
    for (const call of calls) {
      expect(activities.has(call.parentSpanId ?? ''), `${call.name}'s parent is an activity run`).toBe(true);
      const callKey = String(call.attributes['fairway.call_key']);
      expect(seen[callKey]).toEqual([`00-${traceId}-${call.spanId}-01`]);
    }
  }, 90_000);
});
