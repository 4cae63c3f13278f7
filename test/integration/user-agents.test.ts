import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentTaskQueue, estimateOf } from '../../src/agent';
import type { ToolRequest, ToolResponse } from '../../src/contract/tool-registry';
import { decisionSignal } from '../../src/contract/run-messages';
import { submitUpdate } from '../../src/contract/scheduler-messages';
import { startRunWorkflow } from '../../src/fleet/start-run';
import { simulateCompletion } from '../../src/standins/modelplane/completions';
import { echo, echoRequest, EchoInputSchema } from '../support/agents/echo-agents';
import { startBundleWorker } from '../support/bundle-worker';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * An agent defined outside src/ (test/support/agents/echo-agents.ts), bundled with Fairway's
 * workflows the way a user's worker bundles it, runs through a real fleet worker: its model call
 * reaches the simulator and its result, its gate shows the proposal and records who decided, and a
 * tool or effect it did not declare fails the run.
 *
 * The run is started as the API starts one (startRunWorkflow, then the scheduler's submit) on the
 * agent's queue; the API's agent catalog and routing are not used here. The agent's queue hangs off
 * a base queue of its own, whose `lookup` tool is a test worker answering for any agent.
 */
describe('an agent defined in user code (real dev server)', () => {
  let s: TestStack;
  let agentWorker: Awaited<ReturnType<typeof startBundleWorker>> | undefined;
  let toolWorker: Worker;
  let toolDone: Promise<void>;
  let base: string;
  let queue: string;
  let key: string;
  let tenant: string;
  let seq = 0;
  const toolArgs: ToolRequest[] = [];

  beforeAll(async () => {
    s = await startTestStack();
    base = `${s.config.temporal.taskQueue}-user`;
    queue = agentTaskQueue(base, echo.name);
    agentWorker = await startBundleWorker(
      s,
      path.join(__dirname, '..', 'support', 'agents', 'workflows.ts'),
      queue,
    );
    toolWorker = await Worker.create({
      connection: agentWorker.connection,
      namespace: s.config.temporal.namespace,
      taskQueue: `${base}.tool.lookup`,
      activities: {
        lookup: async (req: ToolRequest): Promise<ToolResponse> => {
          toolArgs.push(req);
          return { identity: 'tool:lookup#test', data: { record: { id: req.args.incident, owner: 'ops' } } };
        },
      },
    });
    toolDone = toolWorker.run();
    tenant = `user-${s.id}`;
    key = await s.tenant(tenant);
  }, 180_000);
  afterAll(async () => {
    toolWorker?.shutdown();
    await toolDone;
    await agentWorker?.close();
    await s?.close();
  });

  /** Starts a run of `agent` on the echo agent's queue and queues it with the scheduler. */
  const start = async (raw: unknown, agent = echo.name, onQueue?: string): Promise<string> => {
    const input = EchoInputSchema.parse(raw);
    const runId = `run-${tenant}-${String(++seq).padStart(20, '0')}`;
    const estimatedTokens = estimateOf(echo, input);
    const spec = {
      runId,
      tenant,
      agent,
      priority: 'standard' as const,
      input,
      estimatedTokens,
      createdAt: new Date().toISOString(),
    };
    // Started under the base queue: the run lands on the agent's queue, `queue`.
    const where = onQueue ? { taskQueue: onQueue } : {};
    expect(await startRunWorkflow(s.client, base, spec, s.config.runs, where)).toBe('started');
    const [r] = await s.client.workflow.getHandle(s.config.schedulerWorkflowId).executeUpdate(submitUpdate, {
      args: [[{ runId, tenant, priority: 'standard', cost: estimatedTokens }]],
    });
    expect(r).toMatchObject({ accepted: true });
    return runId;
  };
  const view = (runId: string) => s.call('GET', `/v1/runs/${runId}`, { token: key }).then((r) => r.body);
  const until = (runId: string, statuses: string[]) =>
    waitFor(
      () => view(runId),
      // A view read past the query's bound (a busy worker) comes from search attributes, without the gate.
      (v) => statuses.includes(v?.status as string) && (v.status !== 'awaiting_approval' || v.gate),
      90_000,
      200,
    );

  it('runs its model call, tool, gate and effect: the completion reaches the result, the gate its proposal and approver', async () => {
    const input = EchoInputSchema.parse({ question: 'What does the governor read?', model: 'sim-claude' });
    const runId = await start(input);
    const waiting = await until(runId, ['awaiting_approval', 'failed']);
    expect(waiting.status, JSON.stringify(waiting.error)).toBe('awaiting_approval');

    const record = { id: input.question, owner: 'ops' };
    const expected = simulateCompletion(echoRequest(input, record), 'sim-claude');
    expect(waiting.gate).toEqual({
      gateId: 1,
      proposal: { answer: expected.text, record },
      openedAt: expect.any(String),
      timeoutSeconds: 600,
      onTimeout: 'reject',
    });
    // The decision carries who decided and when (the API sends the key id and its clock).
    const at = new Date().toISOString();
    await s.client.workflow
      .getHandle(runId)
      .signal(decisionSignal, { decision: 'approve', note: 'ship it', by: 'key-abc123', at });
    const done = await until(runId, ['completed', 'failed']);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');

    expect(done.result).toMatchObject({
      runId,
      tenant,
      answer: expected.text,
      record,
      verdict: { decision: 'approve', note: 'ship it', by: 'key-abc123', at, timedOut: false },
      effect: { applied: true },
    });
    expect(expected.text.length).toBeGreaterThan(0);
    expect(done.gate).toMatchObject({
      proposal: { answer: expected.text, record },
      decision: 'approve',
      decidedBy: 'key-abc123',
      decidedAt: at,
      note: 'ship it',
    });
    expect(done.gate.timedOut).toBeUndefined();
    // What the run used is what the provider billed for its one call.
    expect(done.usage.tokens).toBe(expected.usage.totalTokens);
    expect(done.toolCalls).toEqual([
      expect.objectContaining({ tool: 'lookup', outcome: 'ok', identity: 'tool:lookup#test' }),
    ]);
    expect(toolArgs.find((t) => t.runId === runId)).toMatchObject({
      agent: 'echo',
      key: `${runId}:lookup-1`,
    });
  });

  it('refuses a tool the agent did not declare: recorded in its view, the run fails', async () => {
    const runId = await start({ question: 'q', undeclaredTool: 'pager' });
    const done = await until(runId, ['completed', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({
      code: 'tool_not_declared',
      message: 'agent "echo" did not declare tool "pager"',
    });
    expect(done.toolCalls.map((c: { tool: string; outcome: string }) => `${c.tool}:${c.outcome}`)).toEqual([
      'lookup:ok',
      'pager:refused',
    ]);
  });

  it('refuses an effect the agent did not declare, and an agent the bundle does not hold', async () => {
    const refused = await start({ question: 'q', undeclaredEffect: 'publish' });
    // On the echo worker's queue (its own queue has no worker): the bundle there does not hold it.
    const noAgent = await start({ question: 'q' }, 'nobody', queue);
    const done = await until(refused, ['completed', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('effect_not_declared');
    expect(done.error.message).toMatch(/agent "echo" did not declare effect "publish"/);
    const unknown = await until(noAgent, ['completed', 'failed']);
    expect(unknown.status).toBe('failed');
    expect(unknown.error.code).toBe('unknown_agent');
    expect(unknown.error.message).toMatch(/holds no agent "nobody" \(it holds .*echo/);
  });

  it.each([
    ['step-nan', 'ctx.step tokens', 'NaN'],
    ['model-infinite', 'ctx.model maxTokens', 'Infinity'],
  ] as const)(
    'fails a run whose %s asks for tokens that are not a whole number, at once',
    async (bad, what, shown) => {
      const runId = await start({ question: 'q', badTokens: bad });
      const done = await until(runId, ['completed', 'failed']);
      expect(done.status).toBe('failed');
      expect(done.error).toEqual({
        code: 'invalid_tokens',
        message: `agent "echo": ${what} must be a whole number from ${bad === 'step-nan' ? 0 : 1} to 1000000000, not ${shown}`,
      });
      expect(done.usage.tokens).toBe(0);
    },
  );

  it.each([
    ['result', 'result_unserialisable', /agent "echo" returned a value that is not JSON data/],
    ['proposal', 'invalid_gate', /a gate's proposal must be JSON data/],
  ] as const)(
    'fails a run whose %s is not JSON, instead of leaving it open',
    async (notJson, code, message) => {
      const runId = await start({ question: 'q', notJson });
      const done = await until(runId, ['completed', 'failed']);
      expect(done.status).toBe('failed');
      expect(done.error.code).toBe(code);
      expect(done.error.message).toMatch(message);
    },
  );

  it('a cancel ends a run whose agent awaits a promise of its own, not only at its next ctx call', async () => {
    const runId = await start({ question: 'q', hang: true });
    const hanging = await waitFor(
      () => view(runId),
      (v) => v?.status === 'running' && v.toolCalls?.length === 1,
      90_000,
      200,
    );
    expect(hanging.toolCalls.map((c: { tool: string; outcome: string }) => `${c.tool}:${c.outcome}`)).toEqual(
      ['lookup:ok'],
    );
    const cancel = await s.call('POST', `/v1/runs/${runId}/cancel`, { token: key });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(202);
    const done = await until(runId, ['cancelled', 'completed', 'failed']);
    expect(done.status).toBe('cancelled');
  });

  it('runs a conversation of more than 4 MiB, its history staying small', async () => {
    const input = EchoInputSchema.parse({ question: 'Summarise.', contextChars: 4.5 * 2 ** 20 });
    const runId = await start(input);
    const waiting = await until(runId, ['awaiting_approval', 'failed']);
    expect(waiting.status, JSON.stringify(waiting.error)).toBe('awaiting_approval');
    const expected = simulateCompletion(echoRequest(input, { id: input.question, owner: 'ops' }), 'sim-gpt');
    expect(waiting.gate.proposal.answer).toBe(expected.text);
    await s.client.workflow.getHandle(runId).signal(decisionSignal, { decision: 'reject', by: 'key-abc123' });
    const done = await until(runId, ['completed', 'failed']);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result.effect).toBeNull();
    expect(done.usage.tokens).toBe(expected.usage.totalTokens);
    const history = await s.client.workflow.getHandle(runId).fetchHistory();
    const bytes = temporal.api.history.v1.History.encode(history).finish().byteLength;
    expect(bytes).toBeLessThan(64 * 1024);
    console.log(`a ${(4.5).toFixed(1)} MiB conversation through ctx.model: history ${bytes} bytes`);
  }, 180_000);
});
