import { describe, expect, it } from 'vitest';
import {
  ChargeKeys,
  FencedOwners,
  MAX_CHARGE_KEYS,
  MAX_FENCED_OWNERS,
  chargeId,
  ownerId,
} from '../../../src/scheduler/charge-keys';
import { FleetScheduler, LEDGER_RING_TOTAL } from '../../../src/scheduler';
import type { PlainSnapshot, UnitSubmission } from '../../../src/scheduler';
import {
  MAX_ATTEMPT,
  MAX_CONCURRENCY,
  MAX_CORE_TENANTS,
  MAX_FAIRNESS_KEY_LENGTH,
  MAX_GLOBAL_QUEUED,
  MAX_SNAPSHOT_KEY_SLOTS,
  MAX_TENANT_ID_LENGTH,
  MAX_TOKENS,
  withRetryHeadroom,
} from '../../../src/scheduler/limits';
import { decodeCompact, encodeV3 } from '../../../src/scheduler/snapshot-compact';
import { BASE64 } from '../../../src/scheduler/snapshot-numbers';
import { MAX_ENDED_RUNS, type EndedTuple } from '../../../src/scheduler/ended';
import { LINGER_LEASE_TTLS, MAX_LINGERS } from '../../../src/scheduler/lingers';
import type { SchedulerInput } from '../../../src/workflows/scheduler';
import { T0, openGovernor } from './helpers';

const MiB = 1024 * 1024;

/** The longest legal tenant id, distinct per i: 64 characters of a-z, 0-9 and "-". */
const tenantId = (i: number) => `t${i.toString().padStart(6, '0')}-`.padEnd(MAX_TENANT_ID_LENGTH, 'x');
/** 16 hex digits, distinct per n. */
const hex16 = (n: number) => (n * 2654435761 + 0x9e3779b97f).toString(16).padStart(16, '0').slice(-16);
const hex20 = (n: number) => hex16(n) + (n % 65536).toString(16).padStart(4, '0');
/**
 * The longest ids the API makes, each of a batch of its own so that no two share anything but the
 * tenant: `batch-<tenant>-<16 hex>-<4-digit index>` is 92 characters; every other unit is a single
 * run, `run-<tenant>-<20 hex>` (89).
 */
const runIdOf = (tenant: string, n: number) =>
  n % 2 === 0 ? `batch-${tenant}-${hex16(n)}-${9_000 + (n % 1000)}` : `run-${tenant}-${hex20(n)}`;

/** Bytes of the continue-as-new input as the default payload converter writes it (JSON, UTF-8). */
const encodedBytes = (input: SchedulerInput) => Buffer.byteLength(JSON.stringify(input), 'utf8');

/**
 * The fleet at every maximum. `keyOf`, when given, names each fresh unit's fairness key (a retry
 * keeps its first attempt's).
 */
function worstCase(keyOf?: (n: number) => string) {
  const s = FleetScheduler.create(
    {
      settings: {
        concurrency: MAX_CONCURRENCY,
        floors: { standard: 0.1234567890123, batch: 0.0987654321987 },
        leaseTtlSeconds: 86_400,
        globalMaxQueued: MAX_GLOBAL_QUEUED,
      },
      governor: openGovernor({ initialTokensPerMinute: 1e16, maxTokensPerMinute: 1e16 }),
    },
    T0,
  );
  const tenants = Array.from({ length: MAX_CORE_TENANTS }, (_, i) => tenantId(i));
  tenants.forEach((id, i) =>
    s.upsertTenant(
      id,
      {
        weight: 1 + i / 7, // long fractions
        maxQueued: 10_000_000,
        maxInFlight: 1_000_000,
        budget: { tokens: Number.MAX_SAFE_INTEGER, period: 'month' },
      },
      T0,
    ),
  );
  let n = 0;
  let t = T0;
  const fresh = (count: number): UnitSubmission[] =>
    Array.from({ length: count }, () => {
      const i = n++;
      const tenant = tenants[i % tenants.length]!;
      const priority = (['interactive', 'standard', 'batch'] as const)[i % 3]!;
      const unit: UnitSubmission = { runId: runIdOf(tenant, i), tenant, priority, cost: MAX_TOKENS - i };
      if (keyOf) unit.fairnessKey = keyOf(i);
      return unit;
    });
  const submitAll = (units: UnitSubmission[]) => {
    for (let i = 0; i < units.length; i += 1000) s.submit(units.slice(i, i + 1000), t);
  };

  // a. MAX_CONCURRENCY runs admitted, then their leases expire (they come back below as retries).
  const lost = fresh(MAX_CONCURRENCY);
  submitAll(lost);
  const first = s.admit(t);
  expect(first.length).toBe(MAX_CONCURRENCY);
  s.renew(
    first.map((a) => ({ runId: a.runId, attempt: a.attempt, usedTokens: MAX_TOKENS })),
    t,
  );
  t += 86_400_000 + 1;
  expect(s.expireLeases(t).length).toBe(MAX_CONCURRENCY);
  // b. Another MAX_CONCURRENCY in flight, each having reported large usage.
  t += 1234;
  submitAll(fresh(MAX_CONCURRENCY));
  const inFlight = s.admit(t);
  expect(inFlight.length).toBe(MAX_CONCURRENCY);
  s.renew(
    inFlight.map((a) => ({ runId: a.runId, attempt: a.attempt, usedTokens: MAX_TOKENS - a.seq })),
    t + 777,
  );
  // ... and charged call by call up to that usage (the lease keeps `charged` and `perCall`).
  s.charge(
    inFlight.map((a) => ({
      tenant: a.tenant,
      runId: a.runId,
      attempt: a.attempt,
      tokens: MAX_TOKENS - a.seq,
    })),
    t + 777,
  );
  // c. The fleet's queue at its cap with fresh units, then d. the retries' headroom on top.
  t += 999;
  submitAll(fresh(MAX_GLOBAL_QUEUED));
  const retries = lost.map((u, i) => ({ ...u, attempt: MAX_ATTEMPT - i }));
  submitAll(retries);
  return { s, t, tenants };
}

/**
 * The continue-as-new input of `s` with the rest of its state at its maximum too: ended runs, call
 * keys, fenced owners and lingering reservations.
 */
function fullInput(s: FleetScheduler, t: number, tenants: string[]) {
  // The memory of ended runs, full: the longest ids, the largest attempts and charges.
  const v1 = decodeCompact(s.snapshot());
  v1.ended = Array.from({ length: MAX_ENDED_RUNS }, (_, i): EndedTuple => [
    runIdOf(tenants[i % tenants.length]!, 10 ** 7 + i),
    MAX_ATTEMPT,
    1,
    1e12 + i,
  ]);
  // The ledger's call keys, full: charged and not yet confirmed settled.
  const keys = new ChargeKeys();
  for (let i = 0; i < MAX_CHARGE_KEYS + 10; i++) keys.admit(chargeId(`call-${i}`));
  expect(keys.size).toBe(MAX_CHARGE_KEYS);
  v1.chargeKeys = keys.snapshot();
  // Fenced call charges owners, full.
  const fenced = new FencedOwners();
  fenced.fence(Array.from({ length: MAX_FENCED_OWNERS + 10 }, (_, i) => ownerId(`owner-${i}`)));
  expect(fenced.size).toBe(MAX_FENCED_OWNERS);
  v1.fencedOwners = fenced.snapshot();
  // Lingering reservations of expired leases, as many tenants as may hold one, at their largest.
  for (const ts of v1.tenants.slice(0, MAX_LINGERS)) {
    const [ps, pe, reserved, spent] = ts.ledger;
    ts.ledger = [ps, pe, reserved, spent, MAX_TOKENS, t + LINGER_LEASE_TTLS * 86_400_000];
  }
  const full = encodeV3(v1);
  expect(decodeCompact(full).ended).toEqual(v1.ended);

  const input: SchedulerInput = {
    settings: {
      concurrency: MAX_CONCURRENCY,
      floors: { standard: 0.5, batch: 0.5 },
      leaseTtlSeconds: 86_400,
      globalMaxQueued: MAX_GLOBAL_QUEUED,
    },
    governor: openGovernor({ initialTokensPerMinute: 1e16, maxTokensPerMinute: 1e16 }),
    snapshot: full,
    continuedAsNew: 1_000_000,
    maxHistoryEvents: 1_000_000,
  };
  return { input, full };
}

describe('the bound on the continue-as-new input', () => {
  it('stays ≤ 1 MiB at every maximum with the longest legal ids', () => {
    const { s, t, tenants } = worstCase();
    const status = s.status(t);
    // Every maximum is reached: tenants, leases, the queue with its retry headroom, the ledger log.
    expect(s.tenantCount()).toBe(MAX_CORE_TENANTS);
    expect(s.upsertTenant(tenantId(MAX_CORE_TENANTS), { ...defaultSettings }, t)).toBe(false);
    expect(status.inFlight).toBe(MAX_CONCURRENCY);
    expect(status.queued.total).toBe(withRetryHeadroom(MAX_GLOBAL_QUEUED));
    const log = decodeCompact(s.snapshot()).log.rings.reduce((k, [, e]) => k + e.length, 0);
    expect(log).toBe(LEDGER_RING_TOTAL);
    const more = s.submit(
      [{ runId: runIdOf(tenants[0]!, 10 ** 7), tenant: tenants[0]!, priority: 'batch', cost: 1, attempt: 5 }],
      t,
    );
    expect(more[0]).toMatchObject({ accepted: false, code: 'queue_full' });

    const { input, full } = fullInput(s, t, tenants);
    const bytes = encodedBytes(input);
    console.log(`worst-case continue-as-new input: ${bytes} bytes (${(bytes / MiB).toFixed(3)} MiB)`);
    const snap = input.snapshot!;
    const size = (x: unknown) => JSON.stringify(x).length;
    const queues = snap.tenants.reduce((k, t) => k + (t[7] ? size(t[7]) : 0), 0);
    console.log(
      `tenants ${size(snap.tenants) - queues} + queues ${queues} + leases ${size(snap.leases)} + log ${size(snap.log)}`,
    );
    expect(bytes).toBeLessThanOrEqual(MiB);

    // The compact form is exact: a scheduler restored from the JSON writes the same snapshot again.
    const restored = FleetScheduler.restore(JSON.parse(JSON.stringify(input.snapshot)));
    expect(restored.snapshot()).toEqual(full);
    expect(restored.status(t)).toEqual(s.status(t));
  });

  it("stays ≤ 1 MiB at the fairness keys' maximum: every queued unit under a key of its own", () => {
    // The longest legal key, distinct per unit: every flow holds a slot per unit it has queued.
    const { s, t, tenants } = worstCase((n) => `user-${n}-`.padEnd(MAX_FAIRNESS_KEY_LENGTH, 'k'));
    const { input, full } = fullInput(s, t, tenants);
    const marks = full.tenants.flatMap((tuple) =>
      (tuple[7] ?? []).flatMap((lane) => lane.split(' ').filter((u) => /^[A-P~]/.test(u))),
    );
    // Every unit is in a slot of its own: the first MAX_SNAPSHOT_KEY_SLOTS are written by their names,
    // the rest by their buckets (one character, once per run of units in one bucket).
    const named = marks.filter((m) => m.startsWith('~'));
    expect(named).toHaveLength(MAX_SNAPSHOT_KEY_SLOTS);
    expect(marks.length).toBeLessThanOrEqual(withRetryHeadroom(MAX_GLOBAL_QUEUED));
    expect(marks.filter((m) => /^[A-P][rbi]/.test(m))).toHaveLength(marks.length - named.length);
    // Here most named slots start at the key-level virtual time; at worst each leads it by the most
    // written (MAX_TOKENS, 5 characters in base 64).
    const lead = `:${BASE64.to(MAX_TOKENS)}`.length;
    const ahead = named.filter((m) => !/^~[0-9a-z]*:/.test(m)).length * lead;
    // A stored name is "~" + up to 7 characters (a 32-bit hash in base 36); some here are shorter.
    const short = named.reduce((k, m) => k + 8 - (m.split(/[:/]/)[0] ?? '').length, 0);
    // Here units of one flow that hash to one bucket share a mark; at worst each unit has its own.
    const shared = withRetryHeadroom(MAX_GLOBAL_QUEUED) - marks.length;
    const bytes = encodedBytes(input) + ahead + shared + short;
    console.log(
      `continue-as-new input at the key maximum: ≤ ${bytes} bytes (${(bytes / MiB).toFixed(3)} MiB)`,
    );
    expect(bytes).toBeLessThanOrEqual(MiB);

    const restored = FleetScheduler.restore(JSON.parse(JSON.stringify(full)));
    expect(restored.snapshot()).toEqual(full);
    expect(restored.status(t)).toEqual(s.status(t));
  });

  it('the same fleet as plain JSON (uncompacted) would not fit', () => {
    const { s } = worstCase();
    const plain: PlainSnapshot = decodeCompact(s.snapshot());
    expect(Buffer.byteLength(JSON.stringify(plain))).toBeGreaterThan(2 * MiB);
  });
});

const defaultSettings = {
  weight: 1,
  maxQueued: 10,
  maxInFlight: 10,
  budget: { tokens: null, period: 'none' as const },
};
