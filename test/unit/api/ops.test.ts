import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GOVERNOR } from '../../../src/scheduler';
import { synthetic, useHarness } from './harness';

describe('health, metrics and the OpenAPI document', () => {
  const h = useHarness();

  it('answers liveness always and readiness from the fleet', async () => {
    expect((await request(h.app).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await request(h.app).get('/readyz')).status).toBe(200);
    h.fleet.isReady = false;
    const notReady = await request(h.app).get('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body.error.code).toBe('not_ready');
    h.fleet.down = true;
    expect((await request(h.app).get('/readyz')).status).toBe(503);
  });

  it('exposes fleet and API series in Prometheus text', async () => {
    const key = await h.tenant('acme', { maxQueued: 1 });
    const interactive = { ...synthetic(3), priority: 'interactive' };
    const done = await h.submit(key, interactive);
    h.fleet.tick();
    h.fleet.complete(done.body.runId, { usedTokens: 42 });
    await h.submit(key, interactive);
    h.fleet.tick(); // in flight, 300 tokens reserved
    await h.submit(key, interactive); // queued, the tenant's one place
    await h.submit(key); // 429 queue_full
    h.fleet.report([{ at: h.clock.now, calls: 10, throttled: 3, maxRetryAfterMs: 1000, tokens: 3000 }]);
    const governor = h.fleet.status().governor;
    expect(governor.concurrencyLimit).toBeLessThan(DEFAULT_GOVERNOR.maxConcurrency);
    const res = await request(h.app).get('/metrics').set(h.admin());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    for (const line of [
      'fairway_fleet_up 1',
      'fairway_queue_depth{tenant="acme",priority="interactive"} 1',
      'fairway_queue_depth{tenant="acme",priority="batch"} 0',
      'fairway_lane_queue_depth{priority="interactive"} 1',
      'fairway_tenant_queue_depth{tenant="acme"} 1',
      'fairway_in_flight 1',
      `fairway_governor_concurrency_limit{pool=""} ${governor.concurrencyLimit}`,
      `fairway_governor_tokens_per_minute{pool=""} ${governor.tokensPerMinute}`,
      'fairway_governor_throttled_recently{pool=""} 1',
      'fairway_drain_mode{mode="open"} 1',
      'fairway_drain_mode{mode="drained"} 0',
      'fairway_admissions_total 2',
      'fairway_scheduler_shed_total 1',
      'fairway_sheds_total{reason="queue_full"} 1',
      'fairway_submissions_total{priority="interactive"} 3',
      'fairway_ledger_reserved_tokens{tenant="acme"} 300',
      'fairway_ledger_spent_tokens{tenant="acme"} 42',
      'fairway_http_requests_total{method="POST",route="/v1/runs",status="429"} 1',
    ]) {
      expect(res.text).toContain(line);
    }
  });

  it('still answers with the API-side series when the fleet is unreachable', async () => {
    const key = await h.tenant('acme');
    await h.submit(key);
    h.fleet.down = true;
    const res = await request(h.app).get('/metrics').set(h.admin());
    expect(res.status).toBe(200);
    expect(res.text).toContain('fairway_fleet_up 0');
    expect(res.text).toContain('fairway_submissions_total{priority="standard"} 1');
    expect(res.text).not.toMatch(/^fairway_governor_concurrency_limit[{ ]/m);
  });

  it('serves an OpenAPI 3.1 document generated from the schemas', async () => {
    const res = await request(h.app).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const path of [
      '/v1/runs',
      '/v1/runs/{runId}',
      '/v1/batches',
      '/v1/admin/scheduler',
      '/v1/tenants/me',
    ]) {
      expect(res.body.paths).toHaveProperty([path]);
    }
    const schemas = res.body.components.schemas;
    expect(schemas.SyntheticRunRequest.properties.priority.enum).toEqual([
      'interactive',
      'standard',
      'batch',
    ]);
    expect(schemas.SyntheticInput.required).toEqual(['steps']);
    expect(schemas.SyntheticInput.properties.steps).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 1000,
    });
    expect(res.body.paths['/v1/runs'].post.responses).toHaveProperty(['429']);
  });
});
