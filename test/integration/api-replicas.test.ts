import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/infra/cluster/child';
import type { Child } from '../../src/infra/cluster/child';
import { spawnFairway } from '../../src/infra/cluster/fairway-processes';
import { ADMIN, startTestStack, type TestStack } from '../support/stack';

/**
 * Two API processes on one store (the test stack's API, and a second `src/entry/api.ts` process on
 * the same DATA_DIR): a tenant's request and submission rates hold across both, and a tenant an
 * admin disables through one is refused by the other at once.
 */
describe('two API replicas on one store', () => {
  const RATES = { TENANT_REQUEST_RATE_PER_SECOND: '2', TENANT_RATE_PER_SECOND: '1' };
  let s: TestStack;
  let second: Child;
  let secondUrl: string;

  beforeAll(async () => {
    s = await startTestStack(RATES);
    const port = await freePort();
    secondUrl = `http://127.0.0.1:${port}`;
    second = await spawnFairway({
      role: 'api',
      name: 'api-2',
      logDir: s.config.dataDir,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TASK_QUEUE: `fairway-${s.id}`,
        SCHEDULER_WORKFLOW_ID: `scheduler-${s.id}`,
        DATA_DIR: s.config.dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        ADMIN_TOKEN: ADMIN,
        LOG_LEVEL: 'info',
        ...RATES,
      },
    });
  }, 240_000);
  afterAll(async () => {
    await second?.stop({ timeoutMs: 20_000 });
    await s?.close();
  });

  /** `n` requests at once, alternating between the two APIs; the statuses each answered and the time taken. */
  async function alternate(n: number, send: (base: string, i: number) => Promise<Response>) {
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const base = i % 2 === 0 ? s.apiUrl! : secondUrl;
        const res = await send(base, i);
        await res.arrayBuffer();
        return { api: i % 2, status: res.status };
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const ok = (status: number) => answers.filter((a) => a.status === status).length;
    return { answers, seconds, ok };
  }

  it("holds one tenant's request rate across both replicas", async () => {
    const key = await s.tenant('reads');
    const { answers, seconds, ok } = await alternate(40, (base) =>
      fetch(`${base}/v1/tenants/me`, { headers: { authorization: `Bearer ${key}` } }),
    );
    // One bucket: burst 4, then 2 a second. Per process, it would be 8 and then 4 a second.
    expect(ok(200) + ok(429)).toBe(40);
    expect(ok(200)).toBeGreaterThanOrEqual(4);
    expect(ok(200)).toBeLessThanOrEqual(4 + Math.ceil(2 * seconds));
    expect(ok(200)).toBeLessThan(8);
    // Both replicas refused some: neither had a bucket of its own.
    for (const api of [0, 1]) expect(answers.some((a) => a.api === api && a.status === 429)).toBe(true);
  });

  it("holds one tenant's submission rate across both replicas", async () => {
    const key = await s.tenant('writes');
    const { seconds, ok } = await alternate(8, (base, i) =>
      fetch(`${base}/v1/runs`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'Idempotency-Key': `k${i}`,
        },
        body: JSON.stringify({ agent: 'synthetic', input: { steps: 1 } }),
      }),
    );
    // Submissions: burst 2, then 1 a second, however the 8 were spread over the replicas.
    expect(ok(202)).toBeGreaterThanOrEqual(2);
    expect(ok(202)).toBeLessThanOrEqual(2 + Math.ceil(seconds));
    expect(ok(202)).toBeLessThan(4);
    expect(ok(202) + ok(429)).toBe(8);
  });

  it('a tenant disabled through one replica is refused by the other at once', async () => {
    const key = await s.tenant('gone');
    expect((await s.call('POST', '/v1/admin/tenants/gone/disable')).status).toBe(200);
    const res = await fetch(`${secondUrl}/v1/tenants/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('tenant_disabled');
    expect(second.alive()).toBe(true);
  });
});
