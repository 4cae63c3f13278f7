import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signPayload } from '../../../src/api/events/signature';
import { eventKey } from '../../../src/api/intake/event-intake';
import { EVENT_RETENTION_MS } from '../../../src/stores/events/event-store';
import { bearer, makeHarness, type Harness } from './harness';

const SOURCE = 'https://alerts.example.com';
const trigger = {
  eventType: 'incident.opened',
  // Signed deliveries fire only triggers that name their source.
  sources: [SOURCE],
  filter: { 'data.severity': 'high' },
  agent: 'synthetic',
  input: { steps: '{{data.steps}}' },
};
const event = (id: string, data: Record<string, unknown> = { severity: 'high', steps: 2 }) => ({
  specversion: '1.0',
  id,
  type: 'incident.opened',
  source: SOURCE,
  data,
});

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  expect(await check()).toBe(true);
}

describe('events: POST /v1/events, triggers, webhook secrets', () => {
  let h: Harness;
  let key: string;
  let secret: string;

  beforeEach(async () => {
    h = makeHarness();
    key = await h.tenant('acme', { maxQueued: 1 });
    await request(h.app).put('/v1/triggers/page-on-high').set(bearer(key)).send(trigger).expect(201);
    const s = await request(h.app)
      .post('/v1/webhook-secrets')
      .set(bearer(key))
      .send({ source: SOURCE })
      .expect(201);
    secret = (s.body as { secret: string }).secret;
  });
  afterEach(() => h.close());

  const signed = (raw: string, t = Math.floor(h.clock.now / 1000), sig = signPayload(secret, raw, t)) =>
    request(h.app)
      .post('/v1/events?tenant=acme')
      .set('content-type', 'application/json')
      .set('Fairway-Signature', sig)
      .send(raw);

  it('a signed event starts its run once; deliveries again (some concurrent) answer 200 with the same run', async () => {
    const raw = JSON.stringify(event('evt-1'));
    const first = await signed(raw).expect(202);
    expect(first.body).toMatchObject({
      eventId: 'evt-1',
      outcome: 'pending',
      runs: [{ trigger: 'page-on-high', status: 'pending' }],
    });
    const runId = first.body.runs[0].runId as string;
    await until(() => h.fleet.startRunCalls.length === 1);
    const again = await Promise.all([signed(raw), signed(raw), signed(raw), signed(raw)]);
    for (const r of again) {
      expect(r.status).toBe(200);
      expect(r.body.runs).toEqual([expect.objectContaining({ runId, status: 'started' })]);
    }
    expect(h.fleet.startRunCalls).toHaveLength(1);
    expect(h.fleet.startRunCalls[0]).toMatchObject({
      runId,
      tenant: 'acme',
      agent: 'synthetic',
      input: { steps: 2 },
    });
  });

  it('401 and nothing recorded for a bad signature, an old timestamp, a swapped body, an unknown source', async () => {
    const raw = JSON.stringify(event('evt-2'));
    const now = Math.floor(h.clock.now / 1000);
    await signed(raw, now, `t=${now},v1=${'a'.repeat(64)}`).expect(401);
    await signed(raw, now - 301).expect(401);
    await signed(
      JSON.stringify(event('evt-2', { severity: 'high', steps: 9 })),
      now,
      signPayload(secret, raw, now),
    ).expect(401);
    const other = JSON.stringify({ ...event('evt-2'), source: 'https://elsewhere' });
    await signed(other, now, signPayload(secret, other, now)).expect(401);
    await request(h.app).post('/v1/events').set('content-type', 'application/json').send(raw).expect(401);
    await request(h.app)
      .post('/v1/events?tenant=acme')
      .set('content-type', 'application/json')
      .set('Fairway-Signature', signPayload(secret, raw, now))
      .send(raw)
      .expect(202);
    expect((await h.store.events.list('acme', Date.now() * 2, 10)).map((e) => e.envelope.id)).toEqual([
      'evt-2',
    ]);
  });

  it('a tenant key works too; the same id with another body is 422; bad envelopes are 400', async () => {
    await request(h.app).post('/v1/events').set(bearer(key)).send(event('evt-3')).expect(202);
    const clash = await request(h.app)
      .post('/v1/events')
      .set(bearer(key))
      .send(event('evt-3', { severity: 'low' }));
    expect(clash.status).toBe(422);
    expect(clash.body.error.code).toBe('idempotency_conflict');
    const bad = await request(h.app).post('/v1/events').set(bearer(key)).send({ id: '', type: 'x' });
    expect(bad.status).toBe(400);
    await request(h.app)
      .post('/v1/events')
      .set(bearer(key))
      .set('content-type', 'application/json')
      .send('{nope')
      .expect(400);
    await request(h.app)
      .post('/v1/events')
      .set(bearer(key))
      .set('content-type', 'text/plain')
      .send('hi')
      .expect(415);
    await request(h.app).post('/v1/events').set(h.admin()).send(event('evt-4')).expect(403);
  });

  it('an event that matches no trigger is kept and visible as no_match; replay after adding a trigger starts it', async () => {
    await request(h.app)
      .post('/v1/events')
      .set(bearer(key))
      .send(event('evt-5', { severity: 'low', steps: 1 }))
      .expect(202);
    const seen = await request(h.app).get('/v1/events/evt-5').set(bearer(key)).expect(200);
    expect(seen.body).toMatchObject({ outcome: 'no_match', runs: [] });
    await request(h.app)
      .put('/v1/triggers/low')
      .set(bearer(key))
      .send({ ...trigger, filter: { 'data.severity': 'low' } })
      .expect(201);
    const replay = await request(h.app).post('/v1/events/evt-5/replay').set(bearer(key)).expect(202);
    expect(replay.body.runs).toEqual([expect.objectContaining({ trigger: 'low' })]);
    await until(() => h.fleet.startRunCalls.length === 1);
    const again = await request(h.app).post('/v1/events/evt-5/replay').set(bearer(key)).expect(200);
    expect(again.body).toMatchObject({ replayed: false, outcome: 'started' });
    expect(h.fleet.startRunCalls).toHaveLength(1);
    // another tenant does not see it
    const other = await h.tenant('other');
    await request(h.app).get('/v1/events/evt-5').set(bearer(other)).expect(404);
  });

  it('a run refused by the fleet (queue full) is kept with its Retry-After, listed, and replayable', async () => {
    await request(h.app)
      .post('/v1/runs')
      .set(bearer(key))
      .send({ agent: 'synthetic', input: { steps: 1 } })
      .expect(202);
    await request(h.app).post('/v1/events').set(bearer(key)).send(event('evt-6')).expect(202);
    await until(
      async () => (await h.store.events.get('acme', eventKey(event('evt-6'))))?.runs[0]?.status === 'refused',
    );
    const seen = await request(h.app).get('/v1/events/evt-6').set(bearer(key)).expect(200);
    expect(seen.body.outcome).toBe('retrying');
    expect(seen.body.runs[0].refusal).toMatchObject({ code: 'queue_full' });
    const retryAfter = seen.body.runs[0].refusal.retryAfterSeconds as number;
    expect(retryAfter).toBeGreaterThanOrEqual(1); // what the real core says for this backlog
    expect(seen.headers['retry-after']).toBe(String(retryAfter));
    const listed = await request(h.app).get('/v1/events?outcome=retrying').set(bearer(key)).expect(200);
    expect(listed.body.items.map((e: { eventId: string }) => e.eventId)).toEqual(['evt-6']);
    await request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send({ maxQueued: 10 }).expect(200);
    await request(h.app).post('/v1/events/evt-6/replay').set(bearer(key)).expect(202);
    await until(
      async () => (await h.store.events.get('acme', eventKey(event('evt-6'))))?.runs[0]?.status === 'started',
    );
    const after = await request(h.app).get('/v1/events/evt-6').set(bearer(key)).expect(200);
    expect(after.body.outcome).toBe('started');
  });

  it('triggers: validation, listing, deletion; secrets are shown once and listed without the secret', async () => {
    const bad = await request(h.app)
      .put('/v1/triggers/x')
      .set(bearer(key))
      .send({ eventType: 'a', agent: 'synthetic', filter: { 'a..b': 1 } });
    expect(bad.status).toBe(400);
    await request(h.app)
      .put('/v1/triggers/x')
      .set(bearer(key))
      .send({ eventType: 'a', agent: 'nope' })
      .expect(404);
    await request(h.app)
      .put('/v1/triggers/page-on-high')
      .set(bearer(key))
      .send({ ...trigger, priority: 'interactive' })
      .expect(200);
    const list = await request(h.app).get('/v1/triggers').set(bearer(key)).expect(200);
    expect(list.body.items).toEqual([
      expect.objectContaining({ name: 'page-on-high', priority: 'interactive' }),
    ]);
    await request(h.app).delete('/v1/triggers/page-on-high').set(bearer(key)).expect(204);
    await request(h.app).delete('/v1/triggers/page-on-high').set(bearer(key)).expect(404);
    const secrets = await request(h.app).get('/v1/webhook-secrets').set(bearer(key)).expect(200);
    expect(JSON.stringify(secrets.body)).not.toContain(secret);
    expect(secrets.body.items).toEqual([expect.objectContaining({ source: SOURCE })]);
  });
  it('an event id reused after its retention starts a new run (a new run id), not the old closed one', async () => {
    await request(h.app).post('/v1/events').set(bearer(key)).send(event('evt-reused')).expect(202);
    await until(() => h.fleet.startRunCalls.length === 1);
    const old = h.fleet.startRunCalls[0]!.runId;
    h.fleet.tick();
    h.fleet.complete(old);
    expect((await h.fleet.getRun(old))?.status).toBe('completed');
    // Temporal keeps the closed run (its own retention may be longer): the id must not name it again.
    h.clock.now += EVENT_RETENTION_MS + 60_000;
    const again = await request(h.app)
      .post('/v1/events')
      .set(bearer(key))
      .send(event('evt-reused', { severity: 'high', steps: 3 }))
      .expect(202);
    const runId = again.body.runs[0].runId as string;
    expect(runId).not.toBe(old);
    await until(() => h.fleet.startRunCalls.length === 2);
    expect(h.fleet.startRunCalls[1]).toMatchObject({ runId, input: { steps: 3 } });
    await until(async () => (await h.fleet.getRun(runId))?.status === 'queued');
    // Within the new retention the id names the new run.
    const replayed = await request(h.app)
      .post('/v1/events')
      .set(bearer(key))
      .send(event('evt-reused', { severity: 'high', steps: 3 }))
      .expect(200);
    expect(replayed.body.runs).toEqual([expect.objectContaining({ runId })]);
  });
});

describe('events: a trigger gives its runs a fairness key', () => {
  let h: Harness;
  let key: string;
  beforeEach(async () => {
    h = makeHarness();
    key = await h.tenant('shop');
  });
  afterEach(() => h.close());

  const putTrigger = (name: string, fairnessKey: unknown) =>
    request(h.app)
      .put(`/v1/triggers/${name}`)
      .set(bearer(key))
      .send({ eventType: `order.${name}`, agent: 'synthetic', input: { steps: 1 }, fairnessKey });
  const send = (id: string, type: string, data: unknown) =>
    request(h.app)
      .post('/v1/events')
      .set(bearer(key))
      .send({ specversion: '1.0', id, type, source: 'shop', data });

  it("takes a fixed key or the event's value; no value is the default key, a bad one invalid_input", async () => {
    expect((await putTrigger('fixed', 'vip')).body.fairnessKey).toBe('vip');
    expect((await putTrigger('mapped', '{{data.user}}')).body.fairnessKey).toBe('{{data.user}}');
    const started = await send('e1', 'order.fixed', {}).expect(202);
    expect(started.body.runs).toEqual([expect.objectContaining({ fairnessKey: 'vip' })]);
    await send('e2', 'order.mapped', { user: 'user-42' }).expect(202);
    await send('e3', 'order.mapped', { user: 7 }).expect(202);
    await send('e4', 'order.mapped', {}).expect(202);
    await until(() => h.fleet.startRunCalls.length === 4);
    // Each run's unit reaches the scheduler under its key, and its spec carries it (none: default).
    const keys = (xs: { fairnessKey?: string }[]) => xs.map((x) => x.fairnessKey ?? '(default)').sort();
    expect(keys(h.fleet.submitCalls.flat())).toEqual(['(default)', '7', 'user-42', 'vip']);
    expect(keys(h.fleet.startRunCalls)).toEqual(['(default)', '7', 'user-42', 'vip']);
    const bad = await send('e5', 'order.mapped', { user: 'not a key' }).expect(202);
    expect(bad.body.runs).toEqual([
      expect.objectContaining({
        status: 'invalid_input',
        refusal: expect.objectContaining({ message: expect.stringContaining('fairness key at data.user') }),
      }),
    ]);
    const listed = await request(h.app).get('/v1/events/e2?source=shop').set(bearer(key)).expect(200);
    expect(listed.body.runs[0].fairnessKey).toBe('user-42');
  });

  it('refuses a fairness key out of form with a 400 naming it', async () => {
    for (const bad of ['user 1', '#0', 'k'.repeat(65), '{{data..x}}', '{{ data.user }} ', 7]) {
      const res = await putTrigger('t', bad);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'fairnessKey' })]);
    }
    expect((await request(h.app).get('/v1/triggers').set(bearer(key))).body.items).toEqual([]);
  });
});
