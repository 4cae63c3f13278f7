import { describe, expect, it } from 'vitest';
import { FleetScheduler } from '../../../src/scheduler';
import type { Admission, UnitSubmission } from '../../../src/scheduler';
import type { CoreState } from '../../../src/scheduler/core';
import { FLOW_KEY_BUCKETS, MAX_FLOW_KEYS } from '../../../src/scheduler/limits';
import { decodeCompact, encodeV2 } from '../../../src/scheduler/snapshot-compact';
import { T0, makeFleet } from './helpers';

const unit = (runId: string, fairnessKey: string, cost = 100, tenant = 'a'): UnitSubmission => ({
  runId,
  tenant,
  priority: 'standard',
  cost,
  fairnessKey,
});

/** Admits one unit a step (concurrency 1), releasing the one before; the run ids in admission order. */
function order(s: FleetScheduler, steps: number): string[] {
  const out: string[] = [];
  let held: Admission | undefined;
  for (let i = 0; i < steps; i++) {
    if (held)
      s.release(
        [{ runId: held.runId, attempt: held.attempt, usedTokens: held.reserved, outcome: 'completed' }],
        T0,
      );
    [held] = s.admit(T0);
    if (held) out.push(held.runId);
  }
  return out;
}

const fleet = () => makeFleet({ settings: { concurrency: 1 }, tenants: { a: {}, b: {} } });
/** Tenant a's standard flow, read from the core the scheduler wraps (to count its key slots). */
const flowOf = (s: FleetScheduler) => (s as unknown as { s: CoreState }).s.tenants.get('a')!.flows[1];

describe('fairness keys inside a tenant', () => {
  it('gives each of 20 end users its turn while one user has 1,000 runs queued ahead of them', () => {
    const s = fleet();
    s.submit(
      Array.from({ length: 1000 }, (_, i) => unit(`whale-${i}`, 'whale')),
      T0,
    );
    order(s, 10);
    s.submit(
      Array.from({ length: 100 }, (_, i) => unit(`u${i % 20}-${Math.floor(i / 20)}`, `user-${i % 20}`)),
      T0,
    );
    const admitted = order(s, 200);
    // Equal costs: one turn a key, so the k-th run of each user starts within its k-th round of 21.
    for (let u = 0; u < 20; u++)
      for (let k = 0; k < 5; k++) expect(admitted.indexOf(`u${u}-${k}`)).toBeLessThan(21 * (k + 1));
    expect(admitted.slice(0, 105).filter((id) => id.startsWith('whale')).length).toBeLessThanOrEqual(6);
  });

  it('does not let a key jump the line by offering one unit at a time', () => {
    const s = fleet();
    s.submit(
      Array.from({ length: 50 }, (_, i) => unit(`a-${i}`, 'steady')),
      T0,
    );
    const admitted: string[] = [];
    let held: Admission | undefined;
    let next = 0;
    for (let i = 0; i < 40; i++) {
      // The trickler offers its next unit just after its last one was admitted (its slot is idle then).
      if (next === 0 || admitted.includes(`t-${next - 1}`)) s.submit([unit(`t-${next++}`, 'trickle')], T0);
      if (held)
        s.release(
          [{ runId: held.runId, attempt: held.attempt, usedTokens: held.reserved, outcome: 'completed' }],
          T0,
        );
      [held] = s.admit(T0);
      if (held) admitted.push(held.runId);
    }
    const trickled = admitted.filter((id) => id.startsWith('t-')).length;
    expect(trickled).toBeLessThanOrEqual(21);
    expect(trickled).toBeGreaterThanOrEqual(19);
  });

  it('holds at most MAX_FLOW_KEYS slots per flow: keys past the bound share hash buckets', () => {
    const s = fleet();
    s.submit(
      Array.from({ length: 600 }, (_, i) => unit(`k-${i}`, `user-${i}`)),
      T0,
    );
    const keys = flowOf(s).keys;
    expect(keys.slots.size).toBeLessThanOrEqual(MAX_FLOW_KEYS);
    expect([...keys.slots.keys()].filter((k) => k.startsWith('#')).length).toBe(16);
    expect(order(s, 700).length).toBe(600);
    // Served and paid up, the slots are forgotten: only those still owing service remain.
    expect([...keys.slots.values()].every((q) => q.tag > keys.kv)).toBe(true);
    expect(keys.slots.size).toBeLessThanOrEqual(FLOW_KEY_BUCKETS);
  });

  it('keeps only key weights of keys in their form, finite and above 0', () => {
    const s = makeFleet({
      tenants: {
        a: { keyWeights: { vip: 3, 'a b': 2, '#1': 2, ['k'.repeat(65)]: 2, zero: 0, inf: Infinity } },
      },
    });
    expect(s.tenantStatus('a', T0)?.settings.keyWeights).toEqual({ vip: 3 });
  });

  it('restores the key interleaving exactly from a snapshot', () => {
    const s = makeFleet({ settings: { concurrency: 1 }, tenants: { a: { keyWeights: { vip: 3 } }, b: {} } });
    s.submit(
      Array.from({ length: 90 }, (_, i) =>
        unit(`x-${i}`, ['vip', 'user-1', 'user-2'][i % 3]!, 50 + ((i * 37) % 400)),
      ),
      T0,
    );
    s.submit(
      Array.from({ length: 30 }, (_, i) => unit(`b-${i}`, '', 200, 'b')),
      T0,
    );
    order(s, 25);
    const snap = s.snapshot();
    const restored = FleetScheduler.restore(JSON.parse(JSON.stringify(snap)));
    expect(restored.snapshot()).toEqual(snap);
    // A key offering more after the restore joins its own slot again (by its stored digest).
    for (const x of [s, restored]) x.submit([unit('late-vip', 'vip', 50)], T0);
    expect(order(restored, 120)).toEqual(order(s, 120));
    expect(flowOf(restored).keys.slots.size).toBeLessThanOrEqual(flowOf(s).keys.slots.size);
  });

  it('restores a version 2 snapshot (key slots apart, absolute tags) as earlier code wrote it', () => {
    const s = makeFleet({ settings: { concurrency: 1 }, tenants: { a: { keyWeights: { vip: 4 } }, b: {} } });
    s.submit(
      Array.from({ length: 60 }, (_, i) => unit(`x-${i}`, ['vip', 'user-1', 'user-2'][i % 3]!, 40 + i * 8)),
      T0,
    );
    s.submit([unit('b-0', '', 200, 'b')], T0);
    order(s, 20);
    // The same state in version 2: the key-level virtual time and tags absolute, not relative.
    const plain = decodeCompact(s.snapshot());
    for (const t of plain.tenants)
      t.keys = t.keys?.map((k) => (k === 0 ? 0 : [k[0] + 12_345, k[1], k[2].map((x) => x + 12_345)])) as
        typeof t.keys | undefined;
    const v2 = encodeV2(plain);
    expect(v2.v).toBe(2);
    expect(v2.tenants[0]?.[8]).toBeDefined();
    const restored = FleetScheduler.restore(JSON.parse(JSON.stringify(v2)));
    expect(restored.snapshot()).toEqual(s.snapshot());
    expect(order(restored, 60)).toEqual(order(s, 60));
  });

  it('drops a cancelled unit from its key, and its key leaves the turn when nothing is left', () => {
    const s = fleet();
    s.submit([unit('p-0', 'p'), unit('p-1', 'p'), unit('q-0', 'q'), unit('q-1', 'q')], T0);
    s.cancel(['q-0', 'q-1'], T0);
    expect(order(s, 5)).toEqual(['p-0', 'p-1']);
  });
});
