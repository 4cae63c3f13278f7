import pino from 'pino';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { EventDispatcher } from '../../../src/api/intake/event-dispatch';
import { MAX_DISPATCH_ATTEMPTS, retryDelayMs } from '../../../src/api/events/retry';
import { bearer, makeHarness, type Harness } from './harness';

describe('event dispatch: retries with backoff, never before Retry-After, gives up on refusals only', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('retryDelayMs: exponential from 2 s, capped at 5 min, never under Retry-After', () => {
    expect([1, 2, 3, 4].map((a) => retryDelayMs(a, 0))).toEqual([2000, 4000, 8000, 16000]);
    expect(retryDelayMs(20, 0)).toBe(300_000);
    expect(retryDelayMs(1, 7)).toBe(7000);
    expect(retryDelayMs(1, 3600)).toBe(3_600_000);
  });

  it('a refused run is tried again when due, and the event settles as refused after the last attempt', async () => {
    const h = makeHarness();
    harness = h;
    const key = await h.tenant('acme', { maxQueued: 1 });
    const trigger = { eventType: 't', agent: 'synthetic', input: { steps: 1 } };
    await request(h.app).put('/v1/triggers/a').set(bearer(key)).send(trigger).expect(201);
    await request(h.app)
      .post('/v1/runs')
      .set(bearer(key))
      .send({ agent: 'synthetic', input: { steps: 1 } })
      .expect(202);
    const d = new EventDispatcher({
      fleet: h.fleet,
      store: h.store,
      log: pino({ level: 'silent' }),
      now: () => h.clock.now,
    });
    // recorded through the store directly, so that only this dispatcher acts on it
    await h.store.events.record(
      {
        tenant: 'acme',
        eventId: 'e1',
        bodyHash: 'x',
        envelope: { id: 'e1', type: 't', source: 's', specversion: '1.0', data: null },
        receivedAt: h.clock.now,
      },
      () => [
        {
          trigger: 'a',
          runId: 'run-acme-e1e1e1e1e1e1e1e1e1e1',
          agent: 'synthetic',
          priority: 'standard',
          input: { steps: 1 },
          estimatedTokens: 1,
          status: 'pending',
        },
      ],
    );
    await d.dispatchDue();
    let ev = (await h.store.events.get('acme', 'e1'))!;
    expect(ev).toMatchObject({
      state: 'pending',
      attempts: 1,
      runs: [{ status: 'refused', refusal: { code: 'queue_full' } }],
    });
    // The core's Retry-After (whole seconds, at least 1) or the 2 s backoff, whichever is later.
    const retryAfter = ev.runs[0]!.refusal!.retryAfterSeconds;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(ev.nextAttemptAt - h.clock.now).toBe(Math.max(retryAfter * 1000, 2000));
    const submits = h.fleet.submitCalls.length;
    await d.dispatchDue(); // not due yet: nothing offered
    expect(h.fleet.submitCalls.length).toBe(submits);
    for (let i = 1; i < MAX_DISPATCH_ATTEMPTS; i++) {
      h.clock.now += 10 * 60_000;
      await d.dispatchDue();
    }
    ev = (await h.store.events.get('acme', 'e1'))!;
    expect(ev).toMatchObject({
      state: 'settled',
      attempts: MAX_DISPATCH_ATTEMPTS,
      runs: [{ status: 'refused' }],
    });
    // Each attempt starts the run's workflow before offering it, and a refusal discards it again:
    // nothing of the event's run is left behind.
    const eventRun = h.fleet.startRunCalls.filter((c) => c.runId === 'run-acme-e1e1e1e1e1e1e1e1e1e1');
    expect(eventRun).toHaveLength(MAX_DISPATCH_ATTEMPTS);
    expect(h.fleet.discarded.filter((id) => id === 'run-acme-e1e1e1e1e1e1e1e1e1e1')).toHaveLength(
      MAX_DISPATCH_ATTEMPTS,
    );
    expect(h.fleet.records.has('run-acme-e1e1e1e1e1e1e1e1e1e1')).toBe(false);
    const view = await request(h.app).get('/v1/events/e1').set(bearer(key)).expect(200);
    expect(view.body.outcome).toBe('refused');
  });

  it('the claim outlives a slow offer: no second dispatcher offers the event meanwhile', async () => {
    const h = makeHarness();
    harness = h;
    await h.tenant('acme');
    const now = Date.now();
    await h.store.events.record(
      {
        tenant: 'acme',
        eventId: 'e-slow',
        bodyHash: 'x',
        envelope: { id: 'e-slow', type: 't', source: 's', specversion: '1.0', data: null },
        receivedAt: now,
      },
      () => [
        {
          trigger: 'a',
          runId: 'run-acme-e5e5e5e5e5e5e5e5e5e5',
          agent: 'synthetic',
          priority: 'standard',
          input: { steps: 1 },
          estimatedTokens: 1,
          status: 'pending',
        },
      ],
    );
    const log = pino({ level: 'silent' });
    const claimMs = 300;
    const first = new EventDispatcher({ fleet: h.fleet, store: h.store, log, now: Date.now, claimMs });
    const second = new EventDispatcher({ fleet: h.fleet, store: h.store, log, now: Date.now, claimMs });
    let answer!: () => void;
    h.fleet.gate = new Promise<void>((r) => (answer = r));
    const dispatching = first.dispatch('acme', 'e-slow', true);
    // The scheduler answers the first offer only after three of its claim's lifetimes.
    await new Promise((r) => setTimeout(r, claimMs * 3));
    expect(h.fleet.submitCalls).toHaveLength(1);
    expect(await second.dispatch('acme', 'e-slow', false)).toBe(false);
    expect(h.fleet.submitCalls).toHaveLength(1);
    answer();
    expect(await dispatching).toBe(true);
    expect((await h.store.events.get('acme', 'e-slow'))?.runs[0]?.status).toBe('started');
  });
});
