import { QueryNotRegisteredError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/contract/errors';
import type { FleetPort } from '../../../src/contract/fleet-port';
import { withUnavailableAs503 } from '../../../src/fleet/unavailable';
import { withQueryRetry, withRetry } from '../../../src/fleet/with-retry';

/** The update failure Temporal's history service gives for `type` (see its update registry). */
const updateFailed = (type: string, message = 'Workflow Update failed') =>
  new WorkflowUpdateFailedError(
    message,
    ApplicationFailure.create({ type, message: type, nonRetryable: true }),
  );

/** A call that fails with `errs` in turn, then answers 'ok'; counts its calls. */
function flaky(errs: unknown[]) {
  const calls = { n: 0 };
  const fn = () => {
    const err = errs[calls.n++];
    return err === undefined ? Promise.resolve('ok') : Promise.reject(err);
  };
  return { fn, calls };
}

describe('withRetry around scheduler updates', () => {
  it.each(['UnprocessedUpdate', 'AcceptedUpdateCompletedWorkflow'])(
    'sends again an update the server failed as %s (no handler answered it)',
    async (type) => {
      const { fn, calls } = flaky([updateFailed(type), updateFailed(type)]);
      await expect(withRetry(fn)).resolves.toBe('ok');
      expect(calls.n).toBe(3);
    },
  );

  it("takes the scheduler's own refusal as final", async () => {
    const refusal = updateFailed('InvalidSubmission');
    const { fn, calls } = flaky([refusal]);
    await expect(withRetry(fn)).rejects.toBe(refusal);
    expect(calls.n).toBe(1);
  });

  it('answers 503, not 500, when the update stays unanswered after every attempt', async () => {
    const fleet = withUnavailableAs503({
      schedulerStatus: () => withRetry(() => Promise.reject(updateFailed('UnprocessedUpdate')), 2),
    } as unknown as FleetPort);
    const thrown = await fleet.schedulerStatus().catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({ code: 'unavailable', status: 503 });
  });
});

describe('withQueryRetry around scheduler queries', () => {
  it('asks again a query the scheduler refused once (an activation no workflow task started)', async () => {
    const { fn, calls } = flaky([
      new QueryNotRegisteredError('scheduler activation applies history past …', 0),
    ]);
    await expect(withQueryRetry(fn)).resolves.toBe('ok');
    expect(calls.n).toBe(2);
  });

  it('gives up after its attempts, and at once on a scheduler that does not exist', async () => {
    const refused = new Error('refused');
    const always = flaky([refused, refused, refused, refused, refused]);
    await expect(withQueryRetry(always.fn, 3)).rejects.toBe(refused);
    expect(always.calls.n).toBe(3);
    const missing = new WorkflowNotFoundError('not found', 'fairway-scheduler', undefined);
    const gone = flaky([missing]);
    await expect(withQueryRetry(gone.fn)).rejects.toBe(missing);
    expect(gone.calls.n).toBe(1);
  });
});
