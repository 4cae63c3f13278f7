import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { EffectStore } from '../../../src/stores/effects/effect-store';
import { loadConfig } from '../../../src/config';
import { createTemporalFleet } from '../../../src/fleet/temporal-fleet';

/**
 * A run that finishes between the API's read and its signal (the fuzzer in CI: cancel of a batch run
 * answered 500 "workflow execution already completed"): cancel and decide answer false (the API's
 * 409), and any other signal failure still propagates. The client stands in for Temporal at exactly
 * that moment: the run described as running, then gone when signalled.
 */
function fleetWhere(signal: () => Promise<void>) {
  const description = { status: { name: 'RUNNING' }, type: 'runWorkflow', searchAttributes: {}, memo: {} };
  const handle = {
    describe: () => Promise.resolve(description),
    query: () => Promise.resolve({ runId: 'run-t-0', status: 'awaiting_approval' }),
    signal,
  };
  const client = { workflow: { getHandle: () => handle } } as unknown as Client;
  const config = loadConfig({ ADMIN_TOKEN: 'x'.repeat(40), LOG_LEVEL: 'error' });
  return createTemporalFleet(client, config, {} as EffectStore);
}
const closedMeanwhile = () =>
  Promise.reject(new WorkflowNotFoundError('workflow execution already completed', 'run-t-0', undefined));

describe('a run that closes between its read and its signal', () => {
  it('cancel answers false (nothing to cancel), not an error', async () => {
    expect(await fleetWhere(closedMeanwhile).cancelRun('run-t-0')).toBe(false);
  });

  it('approve and reject answer false (not awaiting approval any more), not an error', async () => {
    expect(await fleetWhere(closedMeanwhile).decide('run-t-0', 'approve')).toBe(false);
    expect(await fleetWhere(closedMeanwhile).decide('run-t-0', 'reject', { note: 'late' })).toBe(false);
  });

  it('a signal that was sent answers true; another failure still propagates', async () => {
    expect(await fleetWhere(() => Promise.resolve()).cancelRun('run-t-0')).toBe(true);
    const boom = () => Promise.reject(new Error('connection reset'));
    await expect(fleetWhere(boom).cancelRun('run-t-0')).rejects.toThrow('connection reset');
  });
});
