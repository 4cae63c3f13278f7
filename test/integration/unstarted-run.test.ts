import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareRun, startTestStack } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * A run whose first workflow task has not run yet cannot answer a query: on a busy fleet a batch's
 * runs fill the task queue, and here the run sits on a task queue nobody polls. Reading, approving or
 * rejecting it must answer from what Temporal knows without a worker instead of waiting on that
 * query: the CI fuzz saw an approve of such a run wait past 30 s (here the old code answered 503 after 40 s).
 */
describe('a run whose first workflow task has not run (real dev server)', () => {
  let s: TestStack;
  let key: string;
  let runId: string;
  beforeAll(async () => {
    s = await startTestStack();
    const tenant = `unstarted-${s.id}`;
    key = await s.tenant(tenant);
    runId = `run-${tenant}-${randomBytes(10).toString('hex')}`;
    expect(await startBareRun(s, runId, tenant, `nobody-polls-${s.id}`)).toBe('started');
  });
  afterAll(async () => {
    await s?.client.workflow
      .getHandle(runId)
      .terminate('test over')
      .catch(() => undefined);
    await s?.close();
  });

  it('is read from its search attributes, and approve or reject answer 409 instead of waiting', async () => {
    const view = await s.call('GET', `/v1/runs/${runId}`, { token: key });
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ runId, status: 'queued' });
    for (const decision of ['approve', 'reject']) {
      const r = await s.call('POST', `/v1/runs/${runId}/${decision}`, { token: key, body: {} });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('conflict');
    }
  });
});
