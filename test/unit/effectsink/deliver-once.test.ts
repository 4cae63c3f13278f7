import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import type { EffectStore } from '../../../src/stores/effects/effect-store';
import { deliverOnce } from '../../../src/activities/deliver-once';
import { deliverEffect } from '../../../src/activities/effect-delivery';
import { startEffectSink } from '../../../src/standins/effectsink/sink';
import type { RunningSink } from '../../../src/standins/effectsink/sink';

let sink: RunningSink | undefined;
let store: EffectStore | undefined;
let dir: string | undefined;
afterEach(async () => {
  await sink?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  sink = store = dir = undefined;
});

async function setUp(): Promise<{ sink: RunningSink; store: EffectStore }> {
  dir = mkdtempSync(path.join(os.tmpdir(), 'fairway-deliver-once-'));
  sink = await startEffectSink({ port: 0, host: '127.0.0.1' });
  store = openSqliteEffectStore(path.join(dir, 'effects.db'));
  return { sink, store };
}

describe('an effect delivered across a crash', () => {
  it('is not sent again when the attempt that sent it died before recording it', async () => {
    const { sink, store } = await setUp();
    // Attempt 1 applies the effect and delivers it, then its worker is SIGKILLed: no markDelivered.
    expect(await store.apply('run-1:effect', { runId: 'run-1' })).toEqual({
      applied: true,
      delivered: false,
    });
    await deliverEffect(sink.url, 'run-1:effect');
    // Attempt 2 (the activity's retry on another worker) finds it applied, not confirmed.
    const state = await store.apply('run-1:effect', { runId: 'run-1' });
    expect(state).toEqual({ applied: false, delivered: false });
    await deliverOnce(store, sink.url, 'run-1:effect', state);
    expect(sink.ledger.summary()).toMatchObject({ deliveries: 1, distinctKeys: 1, duplicatedKeys: 0 });
    // ... and records it, so a third attempt asks nobody.
    expect(await store.apply('run-1:effect', { runId: 'run-1' })).toEqual({
      applied: false,
      delivered: true,
    });
  });

  it('is sent when the attempt that applied it died before sending', async () => {
    const { sink, store } = await setUp();
    await store.apply('run-2:effect', { runId: 'run-2' });
    const state = await store.apply('run-2:effect', { runId: 'run-2' });
    await deliverOnce(store, sink.url, 'run-2:effect', state);
    expect(sink.ledger.timesDelivered('run-2:effect')).toBe(1);
  });

  it('is sent at once the first time, without a lookup', async () => {
    const { sink, store } = await setUp();
    const state = await store.apply('run-3:effect', { runId: 'run-3' });
    await deliverOnce(store, `${sink.url}`, 'run-3:effect', state);
    expect(sink.ledger.timesDelivered('run-3:effect')).toBe(1);
    const lookup = await fetch(`${sink.url}/deliveries/${encodeURIComponent('run-3:effect')}`);
    expect(await lookup.json()).toEqual({ key: 'run-3:effect', deliveries: 1 });
    expect((await fetch(`${sink.url}/deliveries/unknown`)).status).toBe(404);
    expect((await fetch(`${sink.url}/deliveries/%E0%A4%A`)).status).toBe(400);
  });
});
