import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverEffect } from '../../../src/activities/effect-delivery';
import { startEffectSink } from '../../../src/standins/effectsink/sink';
import type { RunningSink } from '../../../src/standins/effectsink/sink';

const sinks: RunningSink[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of sinks.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function sink(file?: string): Promise<RunningSink> {
  const s = await startEffectSink({ port: 0, host: '127.0.0.1', file });
  sinks.push(s);
  return s;
}

const post = (s: RunningSink, body: string) =>
  fetch(`${s.url}/deliveries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('effect sink', () => {
  it('counts every delivery and every key delivered more than once', async () => {
    const s = await sink();
    await deliverEffect(s.url, 'run-1:effect');
    await deliverEffect(s.url, 'run-2:effect');
    await deliverEffect(s.url, 'run-1:effect');
    await deliverEffect(s.url, 'run-1:effect');
    const summary = (await (await fetch(`${s.url}/summary`)).json()) as unknown;
    expect(summary).toEqual({
      deliveries: 4,
      distinctKeys: 2,
      duplicatedKeys: 1,
      duplicatedSample: ['run-1:effect'],
    });
  });

  it('refuses what is not a delivery with a 4xx and does not count it', async () => {
    const s = await sink();
    expect((await post(s, 'not json')).status).toBe(400);
    expect((await post(s, '{"key": 42}')).status).toBe(400);
    expect((await post(s, '{"key": ""}')).status).toBe(400);
    expect((await post(s, JSON.stringify({ key: 'x'.repeat(20_000) }))).status).toBe(413);
    expect((await fetch(`${s.url}/nope`)).status).toBe(404);
    expect(s.ledger.summary().deliveries).toBe(0);
    await expect(deliverEffect(s.url, 'a b')).rejects.toThrow(/400/);
  });

  it('keeps its count across a restart when it has a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fairway-sink-'));
    dirs.push(dir);
    const file = join(dir, 'sink.jsonl');
    const first = await sink(file);
    await deliverEffect(first.url, 'k');
    await first.close();
    sinks.splice(sinks.indexOf(first), 1);
    const again = await sink(file);
    await deliverEffect(again.url, 'k');
    expect(again.ledger.summary()).toMatchObject({ deliveries: 2, distinctKeys: 1, duplicatedKeys: 1 });
  });
});
