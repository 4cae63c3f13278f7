import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEffectSink } from '../../src/standins/effectsink/sink';
import type { RunningSink } from '../../src/standins/effectsink/sink';
import { identityOf } from '../../src/activities/tool-activities';
import { startToolWorker } from '../../src/fleet/tool-worker';
import { fleetRunsClause } from '../../src/fleet/run-queues';
import type { ToolWorker } from '../../src/fleet/tool-worker';
import { startTestStack, waitFor, type TestStack } from '../support/stack';
import { toolIdentitySalt } from '../../src/fleet/identity-salt';

/**
 * Issue 13, part 2 on the real dev server: each tool acts behind its own identity, served by a worker
 * holding only that tool's credential; no credential ever reaches a history or a memo; an undeclared
 * tool is refused and shows in the run's view; the sink refuses one tool acting with another's identity.
 */
const CRED = {
  lookup: 'lookup-cred-7f3a9c1e5b2d48a6b0c4',
  pager: 'pager-cred-2e8d4f6a1c9b37e5d0a8',
  scanner: 'scanner-cred-9b1c7e3a5d2f46c8e0b6',
};

describe('per-tool identities (real dev server)', () => {
  let sink: RunningSink;
  let s: TestStack;
  let pager: ToolWorker;
  let pagerConnection: NativeConnection;
  let key: string;
  const runIds: string[] = [];

  beforeAll(async () => {
    sink = await startEffectSink({ port: 0, host: '127.0.0.1', tools: CRED });
    // The stack's own worker serves lookup and scanner only: it never holds the pager's credential.
    s = await startTestStack({
      EFFECT_SINK_URL: sink.url,
      TOOL_LOOKUP_CREDENTIAL: CRED.lookup,
      TOOL_SCANNER_CREDENTIAL: CRED.scanner,
      WORKER_TOOLS: 'lookup,scanner',
    });
    // A worker of its own for the pager, configured with the pager's credential and no other.
    pagerConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
    pager = await startToolWorker({
      config: {
        ...s.config,
        tools: { credentials: { pager: CRED.pager }, serve: ['pager'], identitySalt: undefined },
      },
      connection: pagerConnection,
      log: s.log,
    });
    key = await s.tenant(`tools-${s.id}`);
  });
  afterAll(async () => {
    await pager?.close();
    await pagerConnection?.close();
    await s?.close();
    await sink?.close();
  });

  const start = async (agent: string, input: unknown): Promise<string> => {
    const r = await s.call('POST', '/v1/runs', { token: key, body: { agent, input } });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    runIds.push(r.body.runId as string);
    return r.body.runId as string;
  };
  const view = async (runId: string) => (await s.call('GET', `/v1/runs/${runId}`, { token: key })).body;
  const until = (runId: string, statuses: string[]) =>
    waitFor(
      () => view(runId),
      (v) => statuses.includes(v.status as string),
      120_000,
      300,
    );

  it('serves each tool from a worker holding only that tool’s credential', () => {
    expect(pager.holds()).toEqual(['pager']);
    expect(s.tools?.holds().sort()).toEqual(['lookup', 'scanner']);
  });

  it('triage reads through lookup and, once approved, pages through pager; the sink sees the pager identity', async () => {
    const runId = await start('triage', { incident: 'disk full on db-3' });
    const gated = await until(runId, ['awaiting_approval', 'failed', 'completed']);
    expect(gated.status).toBe('awaiting_approval');
    expect(gated.toolCalls).toEqual([
      expect.objectContaining({
        tool: 'lookup',
        outcome: 'ok',
        identity: identityOf('lookup', CRED.lookup, toolIdentitySalt(undefined, s.config.dataDir)),
      }),
    ]);
    expect((await s.call('POST', `/v1/runs/${runId}/approve`, { token: key })).status).toBe(200);
    const done = await until(runId, ['completed', 'failed']);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(
      done.toolCalls.map((c: { tool: string; outcome: string; identity: string }) => [
        c.tool,
        c.outcome,
        c.identity,
      ]),
    ).toEqual([
      ['lookup', 'ok', identityOf('lookup', CRED.lookup, toolIdentitySalt(undefined, s.config.dataDir))],
      ['pager', 'ok', identityOf('pager', CRED.pager, toolIdentitySalt(undefined, s.config.dataDir))],
    ]);
    expect(done.result).toMatchObject({ resolution: 'remediated', record: expect.stringMatching(/^INC-/) });
    expect(sink.ledger.timesDelivered(`${runId}:remediation`)).toBe(1);
    expect(sink.ledger.deliveredBy(`${runId}:remediation`)).toBe('tool:pager');
  });

  it('audit scans its targets through the scanner tool, one call per four', async () => {
    const targets = ['a.example', 'b.example', 'c.example', 'd.example', 'e.example'];
    const runId = await start('audit', { targets });
    const done = await until(runId, ['completed', 'failed']);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.toolCalls).toHaveLength(2);
    const findings = (done.result as { findings: { target: string; finding: string; tokens: number }[] })
      .findings;
    expect(findings.map((f) => f.target)).toEqual(targets);
    for (const f of findings) {
      expect(f.finding).toMatch(/^(clean|issue)$/);
      expect(f.tokens).toBeGreaterThan(0);
    }
    for (const c of done.toolCalls)
      expect(c).toMatchObject({
        tool: 'scanner',
        outcome: 'ok',
        identity: identityOf('scanner', CRED.scanner, toolIdentitySalt(undefined, s.config.dataDir)),
      });
  });

  it('refuses a tool outside the agent’s declared tools, and the run view shows it', async () => {
    const runId = await start('synthetic', { steps: 1, tokensPerStep: 10, tools: ['lookup', 'pager'] });
    const done = await until(runId, ['completed', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'tool_not_declared' });
    expect(done.toolCalls).toEqual([
      expect.objectContaining({ tool: 'lookup', outcome: 'ok' }),
      expect.objectContaining({ tool: 'pager', outcome: 'refused', identity: null }),
    ]);
    expect(sink.ledger.summary().deliveries).toBe(1); // the triage run's page only
  });

  it('the sink refuses one tool acting with another’s credential', async () => {
    const r = await fetch(`${sink.url}/deliveries`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'fairway-tool': 'pager',
        authorization: `Bearer ${CRED.lookup}`,
      },
      body: JSON.stringify({ key: 'forged:remediation' }),
    });
    expect(r.status).toBe(403);
    expect(sink.ledger.timesDelivered('forged:remediation')).toBe(0);
  });

  it('no credential appears in any recorded history or memo', async () => {
    const ids = new Set<string>([s.config.schedulerWorkflowId, ...runIds]);
    for await (const wf of s.client.workflow.list({ query: fleetRunsClause(s.config.temporal.taskQueue) }))
      ids.add(wf.workflowId);
    expect(ids.size).toBeGreaterThanOrEqual(runIds.length + 1);
    // Every string and every byte field (payloads, decoded as UTF-8) of the history, walked by hand:
    // JSON.stringify would meet protobuf messages' toJSON, which renders bytes as base64.
    const text = (v: unknown): string => {
      const out: string[] = [];
      const seen = new Set<unknown>();
      const walk = (x: unknown): void => {
        if (typeof x === 'string') out.push(x);
        else if (x instanceof Uint8Array) out.push(Buffer.from(x).toString('utf8'));
        else if (x && typeof x === 'object' && !seen.has(x)) {
          seen.add(x);
          for (const value of Object.values(x)) walk(value);
        }
      };
      walk(v);
      return out.join('\n');
    };
    const secrets = Object.values(CRED).flatMap((c) => [c, Buffer.from(c).toString('base64')]);
    let scanned = 0;
    let sawIdentity = false;
    for (const id of ids) {
      const handle = s.client.workflow.getHandle(id);
      const history = text(await handle.fetchHistory());
      const memo = text((await handle.describe()).memo ?? {});
      for (const secret of secrets) {
        expect(history.includes(secret), `${id} history`).toBe(false);
        expect(memo.includes(secret), `${id} memo`).toBe(false);
      }
      // The scan reads decoded payloads: the identities the tools answered with are in there.
      if (history.includes(identityOf('pager', CRED.pager, toolIdentitySalt(undefined, s.config.dataDir))))
        sawIdentity = true;
      scanned++;
    }
    expect(scanned).toBe(ids.size);
    expect(sawIdentity).toBe(true);
  });
});
