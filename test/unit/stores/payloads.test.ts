import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultPayloadConverter } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_CHECK_ENCODING, claimCheckCodec, claimCheckKeys } from '../../../src/fleet/claim-check';
import { openPayloadStore } from '../../../src/stores/open';
import { PAYLOADS_DDL, TOUCH_EVERY_MS } from '../../../src/stores/payloads/payload-store';
import { openSqliteFile } from '../../../src/stores/engine/sqlite';
import type { PayloadStore } from '../../../src/stores/payloads/payload-store';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

let dir: string;
const engines = [sqliteEngine('payloads.db', () => dir), postgresEngine()];
const converter = new DefaultPayloadConverter();
const THRESHOLD = 1024;
const encodingOf = (p: Payload) => new TextDecoder().decode(p.metadata?.encoding ?? new Uint8Array());

describe.each(engines)('claim-check payload codec ($name)', (engine) => {
  const open: PayloadStore[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-payloads-'));
    if (!engine.skip) await engine.setup();
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });
  afterAll(async () => {
    if (!engine.skip) await engine.teardown();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = async (location?: string) => {
    const s = await openPayloadStore(location ?? (await engine.location()));
    open.push(s);
    return s;
  };

  it.skipIf(engine.skip)('keeps small payloads as they are and stores large ones by reference', async () => {
    const codec = claimCheckCodec(await store(), THRESHOLD);
    const small = converter.toPayload({ messages: ['hi'] });
    const conversation = { messages: Array.from({ length: 200 }, (_, i) => `message ${i} `.repeat(10)) };
    const large = converter.toPayload(conversation);
    const [keptSmall, referenced] = await codec.encode([small, large]);
    expect(keptSmall).toBe(small);
    expect(encodingOf(referenced!)).toBe(CLAIM_CHECK_ENCODING);
    expect(referenced!.data!.byteLength).toBeLessThan(200);
    const [a, b] = await codec.decode([keptSmall!, referenced!]);
    expect(converter.fromPayload(a!)).toEqual({ messages: ['hi'] });
    expect(converter.fromPayload(b!)).toEqual(conversation);
    expect(encodingOf(b!)).toBe('json/plain');
  });

  it.skipIf(engine.skip)('passes a payload at the threshold and stores one a byte over it', async () => {
    const codec = claimCheckCodec(await store(), THRESHOLD);
    const at: Payload = {
      metadata: { encoding: new TextEncoder().encode('binary/plain') },
      data: new Uint8Array(THRESHOLD - 20),
    };
    const over: Payload = { ...at, data: new Uint8Array(THRESHOLD - 19).fill(7) };
    const [x, y] = await codec.encode([at, over]);
    expect(x).toBe(at);
    expect(encodingOf(y!)).toBe(CLAIM_CHECK_ENCODING);
    const [back] = await codec.decode([y!]);
    expect(back!.data).toEqual(over.data);
  });

  it.skipIf(engine.skip)(
    'is read by another process opening the same store, and writes a blob once',
    async () => {
      const location = await engine.location();
      const writer = claimCheckCodec(await store(location), THRESHOLD);
      const big = converter.toPayload('x'.repeat(5000));
      const [ref] = await writer.encode([big]);
      const [again] = await writer.encode([big]);
      expect(again).toEqual(ref);
      const reader = claimCheckCodec(await store(location), THRESHOLD);
      const [back] = await reader.decode([ref!]);
      expect(converter.fromPayload(back!)).toBe('x'.repeat(5000));
    },
  );

  it.skipIf(engine.skip)('says clearly when a referenced blob is missing', async () => {
    const [ref] = await claimCheckCodec(await store(), THRESHOLD).encode([
      converter.toPayload('y'.repeat(5000)),
    ]);
    const elsewhere = claimCheckCodec(await store(), THRESHOLD, 'the payload store /elsewhere');
    await expect(elsewhere.decode([ref!])).rejects.toThrow(
      /claim-checked payload [0-9a-f]{64} is missing from the payload store \/elsewhere: every client and worker must share one payload store/,
    );
  });

  it.skipIf(engine.skip)(
    'deletes payloads unused since the cut; a write, a read or a touch keeps one',
    async () => {
      const s = await store();
      const T = 1_700_000_000_000;
      const bytes = (n: number) => new Uint8Array(64).fill(n);
      for (const k of ['a', 'b', 'c', 'd']) await s.put(k, bytes(k.charCodeAt(0)), T);
      // b is read an hour later (marked used), c written again, d touched; a is left alone.
      expect(await s.get('b', T + TOUCH_EVERY_MS)).toEqual(bytes(98));
      await s.put('c', bytes(99), T + TOUCH_EVERY_MS);
      await s.touch('d', T + TOUCH_EVERY_MS);
      // A read within the hour does not move the mark: e stays at T.
      await s.put('e', bytes(101), T);
      await s.get('e', T + TOUCH_EVERY_MS - 1);
      expect(await s.prune(T + 1)).toBe(2);
      expect(await s.get('a', T + TOUCH_EVERY_MS)).toBeNull();
      expect(await s.get('e', T + TOUCH_EVERY_MS)).toBeNull();
      for (const k of ['b', 'c', 'd']) expect(await s.get(k, T + TOUCH_EVERY_MS)).not.toBeNull();
      // Batches: at most `limit` a statement.
      for (let i = 0; i < 5; i++) await s.put(`old-${i}`, bytes(i), T);
      expect(await s.prune(T + 1, 3)).toBe(3);
      expect(await s.prune(T + 1, 3)).toBe(2);
    },
  );

  it.skipIf(engine.skip)(
    'finds the keys of the claim-checked payloads in a history as it stands',
    async () => {
      const codec = claimCheckCodec(await store(), THRESHOLD);
      const [ref] = await codec.encode([converter.toPayload({ text: 'x'.repeat(4 * THRESHOLD) })]);
      const [small] = await codec.encode([converter.toPayload({ text: 'short' })]);
      const { key } = JSON.parse(new TextDecoder().decode(ref!.data!)) as { key: string };
      const history = {
        events: [{ eventId: 1, attributes: { input: { payloads: [small, ref] } } }, { eventId: 2 }],
      };
      expect([...claimCheckKeys(history)]).toEqual([key]);
    },
  );
});

describe('payload store created before retention (SQLite)', () => {
  it('gains the used_at column and prunes old rows by their creation time', async () => {
    const d = mkdtempSync(join(tmpdir(), 'fairway-payloads-old-'));
    const file = join(d, 'payloads.db');
    const old = openSqliteFile(file);
    old.exec(PAYLOADS_DDL);
    old
      .prepare('INSERT INTO payloads (key, data, size, created_at) VALUES (?, ?, ?, ?)')
      .run('k', Buffer.from([1]), 1, 1000);
    old.close();
    const s = await openPayloadStore(file);
    try {
      expect(await s.get('k', 1001)).toEqual(new Uint8Array([1]));
      expect(await s.prune(2000)).toBe(1);
    } finally {
      await s.close();
      rmSync(d, { recursive: true, force: true });
    }
  });
});
