import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { startBenchStack } from '../bench/lib/bench-stack';

/**
 * `npm run fixtures`: records real histories of the scheduler and run workflows (completed,
 * failed, cancelled, human-gated, continued-as-new) into test/fixtures/histories, for the replay
 * test that fails CI when a code change would break running workflows. Re-record deliberately:
 * after a compatible change, a new `patched()` branch (record beside the old fixtures), or a retired
 * patch (CONTRIBUTING.md, "Patch lifecycle"). `npm run fixtures -- run-audit` records only the
 * fixtures named (the others keep the histories of the code that recorded them). run-topup-failed
 * comes from the budget-cap test: `FAIRWAY_RECORD_FIXTURES=1 npx vitest run --project integration
 * test/integration/budget-cap.test.ts`; run-traced (a run started with a trace) from traces.test.ts
 * the same way.
 */
const only = new Set(process.argv.slice(2));
async function main(): Promise<void> {
  const s = await startBenchStack(
    { FLEET_CONCURRENCY: '4', MODEL_TPM: '1000000000', MODEL_RPM: '100000000' },
    { scheduler: { maxHistoryEvents: 150 } },
  );
  const out = path.join(__dirname, '..', 'test', 'fixtures', 'histories');
  try {
    const key = await s.tenant('fixtures', { budget: { tokens: 1_000_000, period: 'day' } });
    const post = async (body: Record<string, unknown>) =>
      (await s.call('POST', '/v1/runs', body, key)).body.runId as string;
    const ok = await post({ agent: 'synthetic', input: { steps: 3, tokensPerStep: 50, effect: true } });
    const slow = await post({ agent: 'synthetic', input: { steps: 2, tokensPerStep: 50, stepMs: 600 } });
    const failed = await post({ agent: 'synthetic', input: { steps: 3, tokensPerStep: 50, failAtStep: 2 } });
    const cancelled = await post({ agent: 'synthetic', input: { steps: 5, tokensPerStep: 10, stepMs: 500 } });
    const triage = await post({ agent: 'triage', input: { incident: 'disk full on db-3' } });
    const audit = await post({ agent: 'audit', input: { targets: ['a', 'b', 'c', 'd', 'e'] } });
    await new Promise((r) => setTimeout(r, 1200));
    await s.call('POST', `/v1/runs/${cancelled}/cancel`, undefined, key);
    for (let i = 0; i < 50; i++) {
      const r = await s.call('GET', `/v1/runs/${triage}`, undefined, key);
      if (r.body.status === 'awaiting_approval') break;
      await new Promise((res) => setTimeout(res, 200));
    }
    await s.call('POST', `/v1/runs/${triage}/approve`, {}, key);
    await s.call(
      'POST',
      '/v1/batches',
      { agent: 'synthetic', items: Array.from({ length: 40 }, () => ({ steps: 1 })) },
      key,
    );
    await new Promise((r) => setTimeout(r, 8000));
    await s.call('POST', '/v1/admin/drain', { intake: 'hold' });
    await s.call('POST', '/v1/admin/resume');

    const save = async (name: string, workflowId: string, runId?: string) => {
      if (only.size > 0 && !only.has(name)) return;
      const history = await s.client.workflow.getHandle(workflowId, runId).fetchHistory();
      writeFileSync(path.join(out, `${name}.pb`), temporal.api.history.v1.History.encode(history).finish());
      console.log(`recorded ${name} (${history.events?.length} events)`);
    };
    for (const [name, id] of Object.entries({ ok, slow, failed, cancelled, triage, audit }))
      await save(`run-${name}`, id);
    const chain = [];
    for await (const wf of s.client.workflow.list({
      query: `WorkflowId = '${s.config.schedulerWorkflowId}'`,
    }))
      chain.push(wf);
    const closed = chain.find((w) => w.status.name === 'CONTINUED_AS_NEW');
    if (closed) await save('scheduler-continued', closed.workflowId, closed.runId);
    await save('scheduler-current', s.config.schedulerWorkflowId);
  } finally {
    await s.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
