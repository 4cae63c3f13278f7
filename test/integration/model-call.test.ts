import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/contract/chat-model';
import { simulateCompletion } from '../../src/standins/modelplane/completions';
import { CLAIM_CHECK_ENCODING } from '../../src/fleet/claim-check';
import { startBundleWorker } from '../support/bundle-worker';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';
import type { modelCallProbe } from '../support/model-call-workflow';

/**
 * Agents' model calls on a real Temporal server: a test-only workflow calls `measureModelCall` and
 * `modelCall` on a fleet worker of the stack (the same activities, ledger and mailbox a run uses).
 */
describe('agent model calls through the fleet worker', () => {
  let s: TestStack;
  let probe: { close(): Promise<void> } | undefined;
  let taskQueue: string;

  beforeAll(async () => {
    s = await startTestStack();
    taskQueue = `${s.config.temporal.taskQueue}-probe`;
    probe = await startBundleWorker(
      s,
      path.join(__dirname, '..', 'support', 'model-call-workflow.ts'),
      taskQueue,
    );
  }, 120_000);
  afterAll(async () => {
    await probe?.close();
    await s?.close();
  });

  const run = (runId: string, tenant: string, requests: ModelRequest[]) =>
    s.client.workflow.execute<typeof modelCallProbe>('modelCallProbe', {
      taskQueue,
      workflowId: runId,
      args: [{ runId, tenant, requests }],
      workflowExecutionTimeout: '2 minutes',
    });
  const bill = async (tenant: string): Promise<number> =>
    ((await (await fetch(`${s.simUrl!}/admin/bill`)).json()) as { tenants: Record<string, number> }).tenants[
      tenant
    ] ?? 0;

  it('answers both dialects with the deterministic completion; a prompt over the codec threshold round-trips; the ledger equals the bill', async () => {
    const tenant = `models-${s.id}`;
    const key = await s.tenant(tenant);
    const question: ModelRequest = {
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'What does the governor read?' },
      ],
      maxTokens: 64,
    };
    // Over 128 KiB of conversation: the workflow's input and the activity's keep only a reference.
    const long = Array.from({ length: 1000 }, (_, i) =>
      `Turn ${i}: the fleet admitted ${i * 7} runs today. `.repeat(8),
    );
    const large: ModelRequest = {
      model: 'sim-claude',
      messages: long.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content })),
      maxTokens: 32,
    };
    const size = JSON.stringify(large).length;
    expect(size).toBeGreaterThan(2 * s.config.claimCheckBytes);
    const requests: ModelRequest[] = [
      { ...question, model: 'sim-gpt' },
      { ...question, model: 'sim-claude' },
      large,
    ];
    const runId = `run-${tenant}-00000000000000000001`;
    const out = await run(runId, tenant, requests);

    expect(out.completions.map((c) => c.text)).toEqual(
      requests.map((r) => simulateCompletion(r, r.model!).text),
    );
    expect(out.completions[0]!.model).toBe('sim-gpt');
    expect(out.completions[1]!.model).toBe('sim-claude');
    expect(out.completions[2]!.usage.inputTokens).toBeGreaterThan(50_000);
    out.completions.forEach((c, i) => expect(c.usage.totalTokens).toBeLessThanOrEqual(out.reserved[i]!));

    // History holds references, not the conversation.
    const history = await s.client.workflow.getHandle(runId).fetchHistory();
    const encoded = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
    expect(encoded.byteLength).toBeLessThan(64 * 1024);
    expect(encoded.includes(CLAIM_CHECK_ENCODING)).toBe(true);

    const billed = out.completions.reduce((n, c) => n + c.usage.totalTokens, 0);
    expect(await bill(tenant)).toBe(billed);
    const me = await waitFor(
      () => s.call('GET', '/v1/tenants/me', { token: key }),
      (r) => r.body?.ledger?.spent === billed && r.body.ledger.reserved === 0,
      30_000,
    );
    expect(me.body.ledger.spent).toBe(billed);
  });

  it('runs a conversation of more than 4 MiB, its history staying small', async () => {
    const tenant = `big-${s.id}`;
    await s.tenant(tenant);
    const turn = (i: number) => `Turn ${i}: ${'the ledger charged what the provider billed; '.repeat(40)}`;
    const messages = Array.from({ length: 2500 }, (_, i) => ({
      role: i % 2 ? ('assistant' as const) : ('user' as const),
      content: turn(i),
    }));
    const request: ModelRequest = { model: 'sim-gpt', messages, maxTokens: 16 };
    const size = Buffer.byteLength(JSON.stringify(request));
    expect(size).toBeGreaterThan(4 * 1024 * 1024);
    const runId = `run-${tenant}-00000000000000000001`;
    const out = await run(runId, tenant, [request]);
    expect(out.completions[0]!.text).toBe(simulateCompletion(request, 'sim-gpt').text);
    const history = await s.client.workflow.getHandle(runId).fetchHistory();
    const encoded = temporal.api.history.v1.History.encode(history).finish().byteLength;
    expect(encoded).toBeLessThan(64 * 1024);
    console.log(`a ${(size / 2 ** 20).toFixed(1)} MiB conversation: history ${encoded} bytes`);
  }, 120_000);
});
