import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookDeliverer } from '../../../src/api/webhooks/deliverer';
import { WebhookScanner } from '../../../src/api/webhooks/scanner';
import type { SendResult } from '../../../src/api/webhooks/send';
import type { BatchView } from '../../../src/contract/fleet-port';
import type { RunEventSource, RunExecution } from '../../../src/contract/run-events';
import type { ApiStore } from '../../../src/stores/api/api-store';
import { openSqliteStore } from '../../../src/stores/api/api-store-sqlite';

const log = pino({ level: 'silent' });
const settings = {
  timeoutMs: 500,
  pollMs: 10,
  targets: 'any' as const,
  retry: { maxAttempts: 3, baseMs: 1_000, maxMs: 10_000 },
};
const exec = (runId: string, over: Partial<RunExecution> = {}): RunExecution => ({
  runId,
  executionId: `${runId}-x1`,
  tenant: 'acme',
  agent: 'synthetic',
  priority: 'standard',
  batchId: null,
  status: 'completed',
  end: 'completed',
  closedAt: 2_000,
  ...over,
});

let store: ApiStore;
afterEach(() => store.close());

/** A visibility that lists `closed` and `awaiting` whatever is asked, and records what was asked. */
function source(closed: RunExecution[], awaiting: RunExecution[]) {
  const since: number[] = [];
  const s: RunEventSource = {
    async closedBetween(_tenants, fromMs, _toMs, visit) {
      since.push(fromMs);
      await visit(closed);
    },
    async awaitingApproval(_tenants, visit) {
      await visit(awaiting);
    },
  };
  return { s, since };
}

describe('the webhook scan and the deliverer', () => {
  it('records each event once across rescans, and moves its cursor only after a whole pass', async () => {
    store = openSqliteStore(':memory:');
    await store.webhooks.createEndpoint(
      {
        id: 'wh_1',
        tenant: 'acme',
        url: 'https://hooks.example.com/',
        events: ['run.completed', 'run.failed', 'run.awaiting_approval', 'batch.completed'],
        description: '',
        createdAt: 1_000,
      },
      `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      10,
    );
    const closed = [
      exec('r1'),
      exec('r2', { status: 'running', end: 'terminated' }),
      exec('r3', { status: 'cancelled', end: 'completed' }),
      exec('b1', { batchId: 'b' }),
    ];
    const { s, since } = source(closed, [
      exec('g1', { status: 'awaiting_approval', end: 'running', closedAt: null }),
    ]);
    const batch: BatchView = {
      batchId: 'b',
      tenant: 'acme',
      total: 1,
      queued: 0,
      running: 0,
      completed: 1,
      failed: 0,
      cancelled: 0,
    };
    let now = 5_000;
    const scan = () =>
      new WebhookScanner({
        store: store.webhooks,
        source: s,
        fleet: { getBatch: async () => batch },
        log,
        pollMs: 100,
        overlapMs: 1_000,
        now: () => now,
      }).scanOnce();
    expect(await scan()).toBe(true);
    now = 6_000;
    expect(await scan()).toBe(true); // a second process (no memory of the first) sees the same
    expect(since).toEqual([4_000, 4_000]);
    const ds = await store.webhooks.listDeliveries('wh_1', 100);
    expect(ds.map((d) => d.type).sort()).toEqual([
      'batch.completed',
      'run.awaiting_approval',
      'run.completed',
      'run.completed',
      'run.failed',
    ]);
    now = 7_000;
    await scan();
    expect(since.at(-1)).toBe(5_000);
  });

  it('scans a long stretch in windows, the cursor past each, the claim renewed per page', async () => {
    store = openSqliteStore(':memory:');
    await store.webhooks.createEndpoint(
      {
        id: 'wh_1',
        tenant: 'acme',
        url: 'https://a.example/',
        events: ['run.completed'],
        description: '',
        createdAt: 0,
      },
      `whsec_${Buffer.alloc(32, 2).toString('base64')}`,
      10,
    );
    const min = 60_000;
    let now = 10 * min;
    const windows: [number, number][] = [];
    let failAt: number | null = null;
    const s: RunEventSource = {
      async closedBetween(_tenants, fromMs, toMs, visit) {
        windows.push([fromMs, toMs]);
        now += 1; // time passes while it reads
        if (fromMs === failAt) throw new Error('visibility unavailable');
        await visit([exec(`r${fromMs}`, { closedAt: fromMs })]);
      },
      async awaitingApproval() {},
    };
    const scanner = new WebhookScanner({
      store: store.webhooks,
      source: s,
      fleet: { getBatch: async () => null },
      log,
      pollMs: 100,
      overlapMs: min,
      now: () => now,
    });
    expect(await scanner.scanOnce()).toBe(true); // the first pass: from 9 min
    now = 50 * min;
    windows.length = 0;
    failAt = 39 * min;
    await expect(scanner.scanOnce()).rejects.toThrow('visibility unavailable');
    const w = 15 * min;
    const from = 9 * min;
    expect(windows).toEqual([
      [from, from + w],
      [from + w, from + 2 * w],
      [from + 2 * w, 50 * min],
    ]);
    // The failed window is read again, the two before it are not; the claim was released.
    now = 60 * min;
    windows.length = 0;
    failAt = null;
    expect(await scanner.scanOnce()).toBe(true);
    expect(windows[0]).toEqual([from + 2 * w - min, from + 3 * w - min]);
    expect(windows.at(-1)![1]).toBe(60 * min);
    expect(await store.webhooks.claimScan('runs', now, 1_000)).toMatchObject({ cursor: 60 * min });
  });

  it('delivers signed, retries with backoff, gives up after the last attempt', async () => {
    store = openSqliteStore(':memory:');
    const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    await store.webhooks.createEndpoint(
      {
        id: 'wh_1',
        tenant: 'acme',
        url: 'https://a.example/',
        events: ['run.completed'],
        description: '',
        createdAt: 0,
      },
      secret,
      10,
    );
    await store.webhooks.recordEvent(
      { eventId: 'msg_1', tenant: 'acme', type: 'run.completed', body: '{"a":1}', occurredAt: 1 },
      1_000,
    );
    let now = 1_000;
    const answers: SendResult[] = [
      { status: 503, answer: 'busy', error: null, retryAfter: '2', durationMs: 3 },
      { status: null, answer: '', error: 'timed out after 500 ms', retryAfter: undefined, durationMs: 500 },
      { status: 500, answer: '', error: null, retryAfter: undefined, durationMs: 1 },
    ];
    const sent: Record<string, string>[] = [];
    const d = new WebhookDeliverer({
      store: store.webhooks,
      settings,
      log,
      now: () => now,
      send: async (_url, headers) => {
        sent.push(headers);
        return answers[sent.length - 1]!;
      },
    });
    const step = async (at: number) => {
      now = at;
      await d.deliverDue();
      await d.settle();
    };
    await step(1_000);
    await step(2_500); // not due: Retry-After 2 s
    expect(sent).toHaveLength(1);
    await step(3_000);
    await step(4_000); // not due: 2 s after the second failure
    await step(5_000);
    await step(60_000); // failed: nothing more
    expect(sent.map((h) => h['webhook-id'])).toEqual(['msg_1', 'msg_1', 'msg_1']);
    const [v] = await store.webhooks.listDeliveries('wh_1', 10);
    expect(v).toMatchObject({ state: 'failed', nextAttemptAt: null });
    expect(v!.attempts.map((a) => [a.at, a.status, a.error])).toEqual([
      [1_000, 503, 'answered 503'],
      [3_000, null, 'timed out after 500 ms'],
      [5_000, 500, 'answered 500'],
    ]);
  });

  it('sends each delivery once when two processes deliver from one store file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fairway-outbox-'));
    store = openSqliteStore(join(dir, 'api.sqlite'));
    const other = openSqliteStore(join(dir, 'api.sqlite'));
    try {
      await store.webhooks.createEndpoint(
        {
          id: 'wh_1',
          tenant: 'acme',
          url: 'https://a.example/',
          events: ['run.failed'],
          description: '',
          createdAt: 0,
        },
        `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
        10,
      );
      for (let i = 0; i < 40; i++)
        await store.webhooks.recordEvent(
          { eventId: `msg_${i}`, tenant: 'acme', type: 'run.failed', body: '{}', occurredAt: 1 },
          1_000,
        );
      const sent: string[] = [];
      const deliverer = (s: ApiStore) =>
        new WebhookDeliverer({
          store: s.webhooks,
          settings,
          log,
          now: () => 2_000,
          send: async (_url, headers) => {
            sent.push(headers['webhook-id']!);
            await new Promise((r) => setTimeout(r, 1));
            return { status: 204, answer: '', error: null, retryAfter: undefined, durationMs: 1 };
          },
        });
      const [a, b] = [deliverer(store), deliverer(other)];
      // Each pass sends at most two at once to the one endpoint: 20 rounds of both processes.
      for (let round = 0; round < 25; round++) {
        await Promise.all([a.deliverDue(), b.deliverDue()]);
        await Promise.all([a.settle(), b.settle()]);
      }
      expect(sent.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `msg_${i}`).sort());
      const ds = await other.webhooks.listDeliveries('wh_1', 100);
      expect(ds.every((d) => d.state === 'delivered' && d.attempts.length === 1)).toBe(true);
    } finally {
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('starts a live endpoint on the first pass while a hung one has 200 due', async () => {
    store = openSqliteStore(':memory:');
    const hook = (id: string, type: 'run.failed' | 'run.completed') =>
      store.webhooks.createEndpoint(
        { id, tenant: 'acme', url: `https://${id}.example/`, events: [type], description: '', createdAt: 0 },
        `whsec_${Buffer.alloc(32, 5).toString('base64')}`,
        10,
      );
    await hook('wh_hung', 'run.failed');
    await hook('wh_live', 'run.completed');
    for (let i = 0; i < 200; i++)
      await store.webhooks.recordEvent(
        { eventId: `msg_${i}`, tenant: 'acme', type: 'run.failed', body: '{}', occurredAt: 1 },
        1_000 + i,
      );
    await store.webhooks.recordEvent(
      { eventId: 'msg_live', tenant: 'acme', type: 'run.completed', body: '{}', occurredAt: 1 },
      1_500,
    );
    expect(await store.webhooks.due(2_000, 1_000, 1_000)).toHaveLength(201);
    let release = () => undefined as void;
    const hung = new Promise<void>((r) => (release = r));
    const sent: string[] = [];
    const d = new WebhookDeliverer({
      store: store.webhooks,
      settings,
      log,
      now: () => 2_000,
      send: async (url, headers) => {
        sent.push(`${new URL(url).hostname}/${headers['webhook-id']}`);
        if (url.includes('hung')) await hung;
        return { status: 204, answer: '', error: null, retryAfter: undefined, durationMs: 1 };
      },
    });
    await d.deliverDue();
    expect(sent).toEqual(['wh_hung.example/msg_0', 'wh_hung.example/msg_1', 'wh_live.example/msg_live']);
    release();
    await d.settle();
  });

  it('records a send that throws as a failed attempt, and retries it', async () => {
    store = openSqliteStore(':memory:');
    await store.webhooks.createEndpoint(
      {
        id: 'wh_1',
        tenant: 'acme',
        url: 'https://a.example/',
        events: ['run.failed'],
        description: '',
        createdAt: 0,
      },
      `whsec_${Buffer.alloc(32, 4).toString('base64')}`,
      10,
    );
    await store.webhooks.recordEvent(
      { eventId: 'msg_1', tenant: 'acme', type: 'run.failed', body: '{}', occurredAt: 1 },
      1_000,
    );
    const d = new WebhookDeliverer({
      store: store.webhooks,
      settings,
      log,
      now: () => 2_000,
      send: () => {
        throw new TypeError('Invalid URL');
      },
    });
    await d.deliverDue();
    await d.settle();
    const [v] = await store.webhooks.listDeliveries('wh_1', 10);
    expect(v).toMatchObject({ state: 'pending', nextAttemptAt: 3_000 });
    expect(v!.attempts.map((a) => [a.n, a.status, a.error])).toEqual([[1, null, 'not sent: Invalid URL']]);
  });
});
