import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signPayload } from '../../../src/api/events/signature';
import { bearer, makeHarness, type Harness } from './harness';

/**
 * Issue 30, finding 4: a webhook source's secret is bound to its events. Event identity is
 * (tenant, source, id); a signed event fires only triggers that name its source in `sources`.
 */
describe('issue 30: webhook sources cannot impersonate each other (finding 4)', () => {
  let h: Harness;
  let key: string;
  const secrets: Record<string, string> = {};

  beforeEach(async () => {
    h = makeHarness();
    key = await h.tenant('acme');
    for (const source of ['stripe', 'github']) {
      const s = await request(h.app).post('/v1/webhook-secrets').set(bearer(key)).send({ source });
      secrets[source] = (s.body as { secret: string }).secret;
    }
    await request(h.app)
      .put('/v1/triggers/dunning')
      .set(bearer(key))
      .send({
        eventType: 'stripe.payment_failed',
        sources: ['stripe'],
        agent: 'synthetic',
        input: { steps: 1 },
      })
      .expect(201);
  });
  afterEach(() => h.close());

  const deliver = (as: string, body: object) => {
    const raw = JSON.stringify({ specversion: '1.0', ...body });
    return request(h.app)
      .post('/v1/events?tenant=acme')
      .set('content-type', 'application/json')
      .set('Fairway-Signature', signPayload(secrets[as]!, raw, Math.floor(h.clock.now / 1000)))
      .send(raw);
  };

  it("the github secret cannot fire stripe's trigger, nor claim stripe's source", async () => {
    // Claiming stripe as the source with github's secret: the signature is github's, so 401.
    const claimed = await deliver('github', { id: 'evt_1', type: 'stripe.payment_failed', source: 'stripe' });
    expect(claimed.status).toBe(401);
    // Its own source with stripe's type: recorded, but no trigger of stripe's fires.
    const own = await deliver('github', { id: 'evt_1', type: 'stripe.payment_failed', source: 'github' });
    expect(own.status).toBe(202);
    expect(own.body.outcome).toBe('no_match');
    expect(own.body.runs).toEqual([]);
  });

  it("an event id taken first by github does not block stripe's genuine delivery", async () => {
    await deliver('github', { id: 'evt_next', type: 'stripe.payment_failed', source: 'github' }).expect(202);
    const genuine = await deliver('stripe', {
      id: 'evt_next',
      type: 'stripe.payment_failed',
      source: 'stripe',
    });
    expect(genuine.status).toBe(202);
    expect(genuine.body).toMatchObject({ eventId: 'evt_next', source: 'stripe', outcome: 'pending' });
    expect(genuine.body.runs).toEqual([expect.objectContaining({ trigger: 'dunning', status: 'pending' })]);
    // Both are kept, each under its source; the id alone is ambiguous, ?source= names one.
    const stripe = await request(h.app).get('/v1/events/evt_next?source=stripe').set(bearer(key)).expect(200);
    expect(stripe.body.source).toBe('stripe');
    expect(stripe.body.links.self).toBe('/v1/events/evt_next?source=stripe');
    const github = await request(h.app).get('/v1/events/evt_next?source=github').set(bearer(key)).expect(200);
    expect(github.body.runs).toEqual([]);
    const ambiguous = await request(h.app).get('/v1/events/evt_next').set(bearer(key));
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.error.details).toMatchObject({ sources: ['github', 'stripe'] });
  });

  it('a trigger without sources fires on events sent with the API key only', async () => {
    await request(h.app)
      .put('/v1/triggers/any')
      .set(bearer(key))
      .send({ eventType: 'build.failed', agent: 'synthetic', input: { steps: 1 } })
      .expect(201);
    const signed = await deliver('github', { id: 'b1', type: 'build.failed', source: 'github' });
    expect(signed.body.runs).toEqual([]);
    const keyed = await request(h.app)
      .post('/v1/events')
      .set(bearer(key))
      .send({ specversion: '1.0', id: 'b1', type: 'build.failed', source: 'github' });
    // The same (source, id) as the signed one, with the same body: the same event, answered again.
    expect(keyed.status).toBe(200);
    const other = await request(h.app)
      .post('/v1/events')
      .set(bearer(key))
      .send({ specversion: '1.0', id: 'b2', type: 'build.failed', source: 'ci' });
    expect(other.status).toBe(202);
    expect(other.body.runs).toEqual([expect.objectContaining({ trigger: 'any' })]);
  });
});
