import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * A finished run's view must not depend on a worker replaying its history (a query on a closed
 * workflow does): with every worker gone, the API still answers each run's status, error and usage
 * from the run's close event.
 */
describe('finished runs read without a worker (real dev server)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ MODEL_TPM: '1000000000', MODEL_RPM: '100000000' });
  });
  afterAll(() => s?.close());

  it('answers completed and failed runs from their close events once the workers are gone', async () => {
    const key = await s.tenant(`closed-${s.id}`);
    const submit = async (input: Record<string, unknown>) => {
      const r = await s.call('POST', '/v1/runs', { token: key, body: { agent: 'synthetic', input } });
      expect(r.status).toBe(202);
      return r.body.runId as string;
    };
    const ok = await submit({ steps: 2, tokensPerStep: 40 });
    const bad = await submit({ steps: 3, tokensPerStep: 40, failAtStep: 2 });
    const final = (id: string) =>
      waitFor(
        () => s.call('GET', `/v1/runs/${id}`, { token: key }),
        (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.status),
        120_000,
      );
    const [liveOk, liveBad] = [(await final(ok)).body, (await final(bad)).body];
    expect(liveOk).toMatchObject({ status: 'completed', usage: { tokens: 80 } });
    expect(liveBad).toMatchObject({ status: 'failed', error: { code: 'agent_step_failed' } });

    await s.worker!.close();
    const [readOk, readBad] = await Promise.all([
      s.call('GET', `/v1/runs/${ok}`, { token: key }),
      s.call('GET', `/v1/runs/${bad}`, { token: key }),
    ]);
    expect(readOk.body).toEqual(liveOk);
    expect(readBad.body).toEqual(liveBad);
  });
});
