import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiStore } from '../../../src/stores/api/api-store';
import { openStore } from '../../../src/stores/open';
import type { OutboxEvent, WebhookEndpoint } from '../../../src/stores/webhooks/webhooks';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

let dir: string;
const engines = [sqliteEngine('api.sqlite', () => dir), postgresEngine()];

const endpoint = (id: string, over: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id,
  tenant: 'acme',
  url: `https://hooks.example.com/${id}`,
  events: ['run.completed', 'run.failed'],
  description: '',
  createdAt: 1000,
  ...over,
});
const event = (eventId: string, over: Partial<OutboxEvent> = {}): OutboxEvent => ({
  eventId,
  tenant: 'acme',
  type: 'run.completed',
  body: JSON.stringify({ type: 'run.completed', data: { eventId } }),
  occurredAt: 2000,
  ...over,
});
const attempt = (n: number, status: number | null) => ({
  n,
  at: 3000 + n,
  status,
  answer: status === null ? '' : 'body',
  error: status === null ? 'ECONNREFUSED' : null,
  durationMs: 5,
});

describe.each(engines)('webhooks store ($name)', (engine) => {
  let stores: ApiStore[] = [];
  beforeAll(async () => (engine.skip ? undefined : engine.setup()), 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), 'fairway-webhooks-'))));
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
    rmSync(dir, { recursive: true, force: true });
  });

  /** Two API processes' stores on one location. */
  const twoStores = async (): Promise<[ApiStore, ApiStore]> => {
    const at = await engine.location();
    stores = [await openStore(at), await openStore(at)];
    return [stores[0]!, stores[1]!];
  };

  it.skipIf(engine.skip)('caps endpoints per tenant, also when racing, and hides the secret', async () => {
    const [a, b] = await twoStores();
    const made = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? a : b).webhooks.createEndpoint(endpoint(`wh_${i}`), 's', 3),
      ),
    );
    expect(made.filter(Boolean)).toHaveLength(3);
    expect(await a.webhooks.listEndpoints('acme')).toHaveLength(3);
    expect(JSON.stringify(await a.webhooks.listEndpoints('acme'))).not.toContain('"s"');
    expect(await a.webhooks.createEndpoint(endpoint('wh_other', { tenant: 'other' }), 's', 3)).toBe(true);
    expect(await b.webhooks.tenantsWithEndpoints()).toEqual(['acme', 'other']);
    expect(await b.webhooks.getEndpoint('other', 'wh_0')).toBeUndefined();
  });

  it.skipIf(engine.skip)(
    'records an event once however often it is seen, fanned out to subscribers',
    async () => {
      const [a, b] = await twoStores();
      await a.webhooks.createEndpoint(endpoint('wh_all'), 'secret-a', 10);
      await a.webhooks.createEndpoint(endpoint('wh_gates', { events: ['run.awaiting_approval'] }), 's', 10);
      await a.webhooks.createEndpoint(endpoint('wh_late', { createdAt: 5000 }), 's', 10);
      const seen = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).webhooks.recordEvent(event('msg_1'), 2500)),
      );
      expect(seen.filter(Boolean)).toHaveLength(1);
      // Only the subscriber that existed when it happened gets it.
      expect(await a.webhooks.due(3000, 10, 10)).toEqual([{ endpointId: 'wh_all', eventId: 'msg_1' }]);
      expect(await a.webhooks.listDeliveries('wh_gates', 10)).toEqual([]);
      expect(await a.webhooks.listDeliveries('wh_late', 10)).toEqual([]);
    },
  );

  it.skipIf(engine.skip)(
    'claims a delivery exclusively and records attempts only under the claim',
    async () => {
      const [a, b] = await twoStores();
      await a.webhooks.createEndpoint(endpoint('wh_1'), 'secret-1', 10);
      await a.webhooks.recordEvent(event('msg_1'), 2500);
      const key = { endpointId: 'wh_1', eventId: 'msg_1' };
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).webhooks.claim(key, 3000, 10_000)),
      );
      const jobs = claims.filter((c) => c !== undefined);
      expect(jobs).toHaveLength(1);
      const job = jobs[0]!;
      expect(job).toMatchObject({
        ...key,
        url: 'https://hooks.example.com/wh_1',
        secret: 'secret-1',
        attempts: 0,
      });
      expect(job.body).toBe(event('msg_1').body);
      expect(await a.webhooks.due(3000, 10, 10)).toEqual([]);
      // A failed attempt: pending again from 4000, claimable then and not before.
      expect(await a.webhooks.recordAttempt(job, attempt(1, null), 'pending', 4000)).toBe(true);
      expect(await a.webhooks.recordAttempt(job, attempt(1, null), 'pending', 4000)).toBe(false);
      expect(await b.webhooks.claim(key, 3500, 10_000)).toBeUndefined();
      const second = await b.webhooks.claim(key, 4000, 10_000);
      expect(second?.attempts).toBe(1);
      // A claim that lapsed and was taken over cannot record.
      const third = await a.webhooks.claim(key, 15_000, 10_000);
      expect(third).toBeDefined();
      expect(await b.webhooks.recordAttempt(second!, attempt(2, 500), 'pending', 16_000)).toBe(false);
      expect(await a.webhooks.recordAttempt(third!, attempt(2, 200), 'delivered', 0)).toBe(true);
      expect(await a.webhooks.claim(key, 99_000, 10_000)).toBeUndefined();
      const [d] = await b.webhooks.listDeliveries('wh_1', 10);
      expect(d).toMatchObject({
        eventId: 'msg_1',
        type: 'run.completed',
        state: 'delivered',
        nextAttemptAt: null,
      });
      expect(d!.attempts.map((x) => [x.n, x.status, x.error])).toEqual([
        [1, null, 'ECONNREFUSED'],
        [2, 200, null],
      ]);
    },
  );

  it.skipIf(engine.skip)(
    "deleting a tenant removes its endpoints, outbox, deliveries and attempts, and no other tenant's",
    async () => {
      const [a] = await twoStores();
      const settings = {
        weight: 1,
        maxQueued: 5,
        maxInFlight: 2,
        budget: { tokens: null, period: 'none' as const },
        onBudgetExhausted: 'fail' as const,
      };
      for (const tenant of ['acme', 'other']) {
        await a.tenants.create(tenant, settings, `k-${tenant}`, 1);
        await a.webhooks.createEndpoint(endpoint(`wh_${tenant}`, { tenant, createdAt: 0 }), 's', 10);
        await a.webhooks.recordEvent(event(`msg_${tenant}`, { tenant }), 2500);
        const job = await a.webhooks.claim(
          { endpointId: `wh_${tenant}`, eventId: `msg_${tenant}` },
          3000,
          10_000,
        );
        expect(await a.webhooks.recordAttempt(job!, attempt(1, null), 'pending', 4000)).toBe(true);
      }
      expect(await a.tenants.delete('acme')).toBe(true);
      expect(await a.webhooks.listEndpoints('acme')).toEqual([]);
      expect(await a.webhooks.listDeliveries('wh_acme', 10)).toEqual([]);
      expect(await a.webhooks.tenantsWithEndpoints()).toEqual(['other']);
      expect(await a.webhooks.due(99_000, 10, 10)).toEqual([
        { endpointId: 'wh_other', eventId: 'msg_other' },
      ]);
      // Re-created with the same id, the tenant starts with no endpoint, delivery or attempt.
      await a.tenants.create('acme', settings, 'k-acme-2', 5);
      expect(await a.webhooks.listEndpoints('acme')).toEqual([]);
      expect(await a.webhooks.getEndpoint('acme', 'wh_acme')).toBeUndefined();
      // The same event id recorded again for the new tenant is new: the old outbox row is gone.
      expect(await a.webhooks.recordEvent(event('msg_acme'), 6000)).toBe(true);
      const [d] = await a.webhooks.listDeliveries('wh_other', 10);
      expect(d?.attempts).toHaveLength(1);
    },
  );

  it.skipIf(engine.skip)(
    'deleting an endpoint removes its deliveries; the scan is claimed by one',
    async () => {
      const [a, b] = await twoStores();
      await a.webhooks.createEndpoint(endpoint('wh_1'), 's', 10);
      await a.webhooks.recordEvent(event('msg_1'), 2500);
      expect(await b.webhooks.deleteEndpoint('other', 'wh_1')).toBe(false);
      expect(await b.webhooks.deleteEndpoint('acme', 'wh_1')).toBe(true);
      expect(await a.webhooks.due(9000, 10, 10)).toEqual([]);
      expect(await a.webhooks.tenantsWithEndpoints()).toEqual([]);

      const scans = await Promise.all([a, b, a, b].map((s) => s.webhooks.claimScan('runs', 1000, 60_000)));
      expect(scans.filter((x) => x !== null)).toEqual([{ cursor: undefined, claim: 61_000 }]);
      await a.webhooks.finishScan('runs', 900);
      expect(await b.webhooks.claimScan('runs', 1000, 60_000)).toEqual({ cursor: 900, claim: 61_000 });
      await b.webhooks.finishScan('runs', 0); // a failed pass: the cursor stays
      const held = await a.webhooks.claimScan('runs', 1100, 60_000);
      expect(held).toEqual({ cursor: 900, claim: 61_100 });
      // The holder moves the cursor and renews; a stale token changes nothing.
      expect(await a.webhooks.renewScan('runs', 61_100, 950, 62_000)).toBe(true);
      expect(await b.webhooks.renewScan('runs', 61_100, 5_000, 99_000)).toBe(false);
      expect(await a.webhooks.renewScan('runs', 62_000, 0, 62_100)).toBe(true); // the cursor stays
      // A scanner that died: its claim lapses.
      expect(await b.webhooks.claimScan('runs', 2000, 60_000)).toBeNull();
      expect(await b.webhooks.claimScan('runs', 62_100, 60_000)).toEqual({ cursor: 950, claim: 122_100 });
    },
  );

  it.skipIf(engine.skip)(
    'prunes finished deliveries past their retention, keeps pending ones and gates',
    async () => {
      const [a, b] = await twoStores();
      const day = 24 * 3600 * 1000;
      await a.webhooks.createEndpoint(
        endpoint('wh_1', { createdAt: 0, events: ['run.completed', 'run.awaiting_approval'] }),
        's',
        10,
      );
      for (const id of ['msg_done', 'msg_open'])
        await a.webhooks.recordEvent(event(id, { occurredAt: 10 }), 1_000);
      await a.webhooks.recordEvent(
        event('msg_gate', { type: 'run.awaiting_approval', occurredAt: 10 }),
        1_000,
      );
      for (const id of ['msg_done', 'msg_gate']) {
        const job = await a.webhooks.claim({ endpointId: 'wh_1', eventId: id }, 2_000, 10_000);
        await a.webhooks.recordAttempt(job!, attempt(1, 200), 'delivered', 0);
      }
      expect(await b.webhooks.prune(6 * day)).toBe(0);
      expect(await b.webhooks.prune(8 * day)).toBe(2);
      expect((await a.webhooks.listDeliveries('wh_1', 10)).map((d) => d.eventId)).toEqual(['msg_open']);
      // The done event is gone (seen again, it is new), the gate's is kept: seen again, nothing happens.
      expect(
        await a.webhooks.recordEvent(event('msg_gate', { type: 'run.awaiting_approval' }), 8 * day),
      ).toBe(false);
      expect(await a.webhooks.recordEvent(event('msg_done', { occurredAt: 8 * day }), 8 * day)).toBe(true);
    },
  );

  it.skipIf(engine.skip)('lists at most the cap of due deliveries per endpoint, oldest first', async () => {
    const [a] = await twoStores();
    await a.webhooks.createEndpoint(endpoint('wh_a', { createdAt: 0 }), 's', 10);
    for (let i = 0; i < 5; i++) await a.webhooks.recordEvent(event(`msg_a${i}`, { occurredAt: 10 }), 100 + i);
    await a.webhooks.createEndpoint(endpoint('wh_b', { createdAt: 0 }), 's', 10);
    await a.webhooks.recordEvent(event('msg_b', { occurredAt: 10 }), 200);
    expect(await a.webhooks.due(1_000, 10, 2)).toEqual([
      { endpointId: 'wh_a', eventId: 'msg_a0' },
      { endpointId: 'wh_a', eventId: 'msg_a1' },
      { endpointId: 'wh_b', eventId: 'msg_b' },
    ]);
    expect(await a.webhooks.due(1_000, 2, 2)).toHaveLength(2);
  });

  it.skipIf(engine.skip)('prunes in batches until none is left, attempts with their deliveries', async () => {
    const [a] = await twoStores();
    const day = 24 * 3600 * 1000;
    await a.webhooks.createEndpoint(endpoint('wh_1', { createdAt: 0 }), 's', 10);
    const ids = Array.from({ length: 7 }, (_, i) => `msg_${i}`);
    for (const id of ids) {
      await a.webhooks.recordEvent(event(id, { occurredAt: 10 }), 1_000);
      const job = await a.webhooks.claim({ endpointId: 'wh_1', eventId: id }, 2_000, 10_000);
      await a.webhooks.recordAttempt(job!, attempt(1, 200), 'delivered', 0);
    }
    await a.webhooks.recordEvent(event('msg_open', { occurredAt: 10 }), 1_000);
    // Batches of 3: 3 + 3 + 1 deliveries, then the events none is left for.
    expect(await a.webhooks.prune(8 * day, 3)).toBe(7);
    expect((await a.webhooks.listDeliveries('wh_1', 20)).map((d) => d.eventId)).toEqual(['msg_open']);
    for (const id of ids)
      expect(await a.webhooks.recordEvent(event(id, { occurredAt: 8 * day }), 8 * day)).toBe(true);
    const fresh = await a.webhooks.listDeliveries('wh_1', 20);
    expect(fresh.filter((d) => d.attempts.length > 0)).toEqual([]);
  });
});
