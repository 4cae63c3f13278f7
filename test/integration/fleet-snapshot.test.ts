import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor, type TestStack } from '../support/stack';

/** Metrics and the console read the real scheduler through one shared snapshot (status + `tenants` query). */
describe('the shared fleet snapshot on real Temporal', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack();
    await s.tenant('snap-a', { weight: 2 });
    await s.tenant('snap-b');
  }, 120_000);
  afterAll(() => s?.close());

  it('serves every tenant in the metrics and the console from the tenants query', async () => {
    // The snapshot may be up to 5 s old (the sampler's read at start, before the tenants existed).
    const metrics = await waitFor(
      () => s.call<string>('GET', '/metrics'),
      (r) => r.status === 200 && r.body.includes('tenant="snap-b"'),
      30_000,
      500,
    );
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^fairway_fleet_up 1$/m);
    for (const t of ['snap-a', 'snap-b'])
      expect(metrics.body).toMatch(new RegExp(`^fairway_tenant_in_flight\\{tenant="${t}"\\} 0$`, 'm'));
    const console = await s.call('GET', '/v1/admin/console');
    expect(console.status).toBe(200);
    const rows = (console.body as { tenants: { tenant: string; weight: number }[] }).tenants;
    expect(rows.map((r) => [r.tenant, r.weight]).sort()).toEqual([
      ['snap-a', 2],
      ['snap-b', 1],
    ]);
  }, 60_000);
});
