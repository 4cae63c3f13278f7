import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { signPayload } from '../../../src/api/events/signature';
import { eventKey } from '../../../src/api/intake/event-intake';
import { bearer, makeHarness, synthetic, type Harness } from './harness';

/**
 * Issue 30, findings 2 and 3: every tenant request is charged to its request rate before anything is
 * looked up (resends included); new work to the submission rate, one unit per run an event starts;
 * triggers, webhook secrets and a trigger's input are capped; an event parses only its own type's triggers.
 */

const SOURCE = 'https://alerts.example.com';
const event = (id: string) => ({ specversion: '1.0', id, type: 'incident.opened', source: SOURCE, data: {} });
const trigger = (eventType = 'incident.opened', input: unknown = { steps: 1 }) => ({
  eventType,
  agent: 'synthetic',
  input,
});

let h: Harness;
afterEach(() => h.close());

/** Status counts of `n` sequential calls. */
async function statuses(n: number, call: () => request.Test): Promise<Record<number, number>> {
  const seen: Record<number, number> = {};
  for (let i = 0; i < n; i++) {
    const s = (await call()).status;
    seen[s] = (seen[s] ?? 0) + 1;
  }
  return seen;
}

describe('issue 30: resends are rate limited (finding 2)', () => {
  it('POST /v1/runs with a known Idempotency-Key draws on the request rate', async () => {
    h = makeHarness({ ratePerSecond: 2 });
    const key = await h.tenant('acme');
    expect((await h.submit(key, synthetic(), { 'Idempotency-Key': 'k1' })).status).toBe(202);
    const seen = await statuses(12, () => h.submit(key, synthetic(), { 'Idempotency-Key': 'k1' }));
    // Burst 4, one spent on the first submission: 3 resends answered, the rest 429.
    expect(seen).toEqual({ 200: 3, 429: 9 });
  });

  it('POST /v1/events with a known id, by key or signed, draws on the request rate', async () => {
    h = makeHarness({ ratePerSecond: 2 });
    const key = await h.tenant('acme');
    h.clock.now += 10_000; // the tenant's buckets full again after its setup requests
    const s = await request(h.app).post('/v1/webhook-secrets').set(bearer(key)).send({ source: SOURCE });
    const secret = (s.body as { secret: string }).secret;
    h.clock.now += 10_000;
    expect((await request(h.app).post('/v1/events').set(bearer(key)).send(event('e1'))).status).toBe(202);
    expect(
      await statuses(8, () => request(h.app).post('/v1/events').set(bearer(key)).send(event('e1'))),
    ).toEqual({ 200: 3, 429: 5 });

    h.clock.now += 10_000;
    const raw = JSON.stringify(event('e2'));
    const sig = signPayload(secret, raw, Math.floor(h.clock.now / 1000));
    const signed = () =>
      request(h.app)
        .post('/v1/events?tenant=acme')
        .set('content-type', 'application/json')
        .set('Fairway-Signature', sig)
        .send(raw);
    expect((await signed()).status).toBe(202);
    // A captured delivery replayed within its 300 s window.
    expect(await statuses(8, signed)).toEqual({ 200: 3, 429: 5 });
  });

  it('every other tenant route is charged once at the door (triggers, secrets, events)', async () => {
    h = makeHarness({ ratePerSecond: 1 });
    const key = await h.tenant('acme');
    h.clock.now += 10_000;
    const seen = await statuses(4, () => request(h.app).get('/v1/triggers/nope').set(bearer(key)));
    expect(seen).toEqual({ 404: 2, 429: 2 });
  });
});

describe('issue 30: trigger fan-out is charged per run (finding 3)', () => {
  it('one event matching five triggers costs five submission units', async () => {
    h = makeHarness({ ratePerSecond: 2 });
    const key = await h.tenant('acme');
    for (let i = 0; i < 5; i++) {
      h.clock.now += 1000;
      expect((await request(h.app).put(`/v1/triggers/t${i}`).set(bearer(key)).send(trigger())).status).toBe(
        201,
      );
    }
    h.clock.now += 10_000;
    const first = await request(h.app).post('/v1/events').set(bearer(key)).send(event('fan-1'));
    expect(first.status).toBe(202);
    expect(first.body.runs).toHaveLength(5);
    // Burst 4, five runs taken: one unit in debt, so the next event waits.
    const second = await request(h.app).post('/v1/events').set(bearer(key)).send(event('fan-2'));
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe('rate_limited');
    // Refused before it was recorded: nothing to look up.
    expect(await h.store.events.get('acme', eventKey(event('fan-2')))).toBeUndefined();
  });

  it('a replay that adds runs is charged for them', async () => {
    h = makeHarness({ ratePerSecond: 2 });
    const key = await h.tenant('acme');
    h.clock.now += 10_000;
    await request(h.app).post('/v1/events').set(bearer(key)).send(event('r-1')).expect(202); // no trigger yet
    for (let i = 0; i < 5; i++) {
      h.clock.now += 1000;
      await request(h.app).put(`/v1/triggers/t${i}`).set(bearer(key)).send(trigger()).expect(201);
    }
    h.clock.now += 10_000;
    await request(h.app).post('/v1/events/r-1/replay').set(bearer(key)).expect(202);
    const next = await h.submit(key);
    expect(next.status).toBe(429);
  });
});

describe('issue 30: caps on triggers, webhook secrets and a trigger input (finding 3)', () => {
  it('refuses a tenant trigger past the cap, a secret past the cap, and an input past its size', async () => {
    h = makeHarness({
      eventCaps: {
        maxTriggers: 3,
        maxWebhookSecrets: 2,
        maxTriggerInputBytes: 1024,
        maxWebhookEndpoints: 10,
      },
    });
    const key = await h.tenant('acme');
    for (let i = 0; i < 3; i++)
      await request(h.app).put(`/v1/triggers/t${i}`).set(bearer(key)).send(trigger()).expect(201);
    const over = await request(h.app).put('/v1/triggers/t3').set(bearer(key)).send(trigger());
    expect(over.status).toBe(409);
    expect(over.body.error.message).toMatch(/3 triggers/);
    // Replacing one that exists is not a new one.
    await request(h.app).put('/v1/triggers/t0').set(bearer(key)).send(trigger('other')).expect(200);

    for (const source of ['a', 'b'])
      await request(h.app).post('/v1/webhook-secrets').set(bearer(key)).send({ source }).expect(201);
    const third = await request(h.app).post('/v1/webhook-secrets').set(bearer(key)).send({ source: 'c' });
    expect(third.status).toBe(409);
    // Rotating one that exists is allowed.
    await request(h.app).post('/v1/webhook-secrets').set(bearer(key)).send({ source: 'a' }).expect(200);

    await request(h.app).delete('/v1/triggers/t1').set(bearer(key)).expect(204);
    const big = await request(h.app)
      .put('/v1/triggers/big')
      .set(bearer(key))
      .send(trigger('incident.opened', { text: 'x'.repeat(2000) }));
    expect(big.status).toBe(413);
    expect(big.body.error.details).toMatchObject({ limitBytes: 1024 });
  });

  it('an event reads the input of no trigger of another type', async () => {
    h = makeHarness();
    const key = await h.tenant('acme');
    const input = { marker: 'm'.repeat(5000) };
    await request(h.app).put('/v1/triggers/other').set(bearer(key)).send(trigger('other.type', input));
    const parse = vi.spyOn(JSON, 'parse');
    try {
      await request(h.app).post('/v1/events').set(bearer(key)).send(event('p-1')).expect(202);
      // The other trigger's input never becomes an object (its text may be scanned, never built).
      const built = parse.mock.results.filter(
        (r) => r.type === 'return' && JSON.stringify(r.value ?? null).includes('"marker"'),
      );
      expect(built).toHaveLength(0);
    } finally {
      parse.mockRestore();
    }
  });
});
