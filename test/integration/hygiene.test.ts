import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliStatus, temporalCli, temporalCliOutcome } from '../support/cli';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

describe('scheduler message hygiene', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ MODEL_TPM: '1000000000', MODEL_RPM: '100000000' });
  });
  afterAll(() => s?.close());

  it('refuses malformed updates and drops malformed signals from the CLI, and keeps admitting', async () => {
    const address = s.config.temporal.address!;
    const id = s.config.schedulerWorkflowId;
    const update = (name: string, input: string) =>
      temporalCliOutcome(address, [
        'workflow',
        'update',
        'execute',
        '--workflow-id',
        id,
        '--name',
        name,
        '--input',
        input,
      ]);
    const before = await cliStatus(address, id);

    for (const [name, input] of [
      ['upsertTenants', '{"settings": null}'],
      ['upsertTenants', '[{"tenant": "x", "settings": null}]'],
      ['patchSettings', 'null'],
      ['patchSettings', '{"concurrency": "all"}'],
      ['drainNow', '{"intake": "sometimes"}'],
    ] as const) {
      const r = await update(name, input);
      expect(r.ok, `${name} ${input} was accepted:\n${r.out}`).toBe(false);
      expect(r.out).toMatch(/malformed|expects|must be|unknown/);
    }
    // A malformed unit is refused alone (its neighbours in the same update are not): the update
    // completes and answers invalid_unit for that unit; a malformed message is refused whole.
    const unit = await update(
      'submit',
      '[{"runId": "r1", "tenant": "x", "priority": "standard", "cost": 1}]',
    );
    expect(unit.ok, unit.out).toBe(true);
    expect(unit.out).toMatch(/invalid_unit/);
    const notAList = await update('submit', '{"runId": "r1"}');
    expect(notAList.ok, notAList.out).toBe(false);
    for (const input of ['"garbage"', 'null', '{"releases": "all", "renewals": [null, 5]}', '[1,2,3]']) {
      await temporalCli(address, [
        'workflow',
        'signal',
        '--workflow-id',
        id,
        '--name',
        'report',
        '--input',
        input,
      ]);
    }

    // The scheduler is still running, took no settings from the garbage, and admits a run to completion.
    const after = await cliStatus(address, id);
    expect(after.config).toEqual(before.config);
    const describe = await s.client.workflow.getHandle(id).describe();
    expect(describe.status.name).toBe('RUNNING');
    const key = await s.tenant(`hygiene-${s.id}`);
    const submitted = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 1, tokensPerStep: 10 } },
    });
    expect(submitted.status).toBe(202);
    const done = await waitFor(
      () => s.call('GET', `/v1/runs/${submitted.body.runId as string}`, { token: key }),
      (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.status),
      120_000,
    );
    expect(done.body.status).toBe('completed');
    // No workflow task of the scheduler failed on the way (a throwing handler would have left one).
    const history = await s.client.workflow.getHandle(id).fetchHistory();
    const failedTasks = (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes);
    expect(failedTasks).toEqual([]);
  });

  it('answers a crowd of operator queries while it is busy admitting (no "query buffer is full")', async () => {
    const address = s.config.temporal.address!;
    const id = s.config.schedulerWorkflowId;
    const key = await s.tenant(`crowd-${s.id}`);
    // Keep the scheduler's workflow tasks coming while twelve CLIs query it at once, twice over.
    const burst = Promise.all(
      Array.from({ length: 40 }, () =>
        s.call('POST', '/v1/runs', {
          token: key,
          body: { agent: 'synthetic', input: { steps: 1, tokensPerStep: 10 } },
        }),
      ),
    );
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.allSettled(Array.from({ length: 12 }, () => cliStatus(address, id)));
      const refused = answers
        .filter((a) => a.status === 'rejected')
        .map((a) => String((a as PromiseRejectedResult).reason));
      expect(refused).toEqual([]);
    }
    expect((await burst).map((r) => r.status)).toEqual(Array(40).fill(202));
  });
});
