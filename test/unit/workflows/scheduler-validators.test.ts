import { describe, expect, it } from 'vitest';
import { MAX_UNITS_PER_SUBMIT } from '../../../src/scheduler/limits';
import {
  validateDrain,
  validateSettingsPatch,
  isWellFormedUnit,
  submitEach,
  validateSubmissions,
  validateTopUps,
  validateUpsertTenants,
} from '../../../src/workflows/scheduler-validators';

const ok = (f: () => void) => expect(f).not.toThrow();
const refused = (f: () => void) => expect(f).toThrow(TypeError);
const settings = { weight: 1, maxQueued: 10, maxInFlight: 5, budget: { tokens: null, period: 'none' } };
const unit = { runId: `run-acme-${'ab'.repeat(10)}`, tenant: 'acme', priority: 'standard', cost: 10 };

describe('scheduler update validators', () => {
  it('upsertTenants refuses anything but a list of { tenant, settings } with whole settings', () => {
    ok(() => validateUpsertTenants([{ tenant: 'acme', settings } as never]));
    for (const bad of [
      null,
      { settings: null },
      [{ tenant: 'acme', settings: null }],
      [{ tenant: 'ACME', settings }],
      [{ tenant: 'x'.repeat(65), settings }],
      [{ tenant: 'acme', settings: { ...settings, weight: 0 } }],
      [{ tenant: 'acme', settings: { ...settings, maxQueued: -1 } }],
      [{ tenant: 'acme', settings: { ...settings, budget: null } }],
      [{ tenant: 'acme', settings: { ...settings, budget: { tokens: 5, period: 'week' } } }],
    ])
      refused(() => validateUpsertTenants(bad as never));
  });

  it('patchSettings refuses null, unknown keys and values that are not numbers in range', () => {
    ok(() => validateSettingsPatch({ concurrency: 10, floors: { batch: 0.1 } }));
    ok(() => validateSettingsPatch({}));
    for (const bad of [
      null,
      [],
      'x',
      { concurrency: 'many' },
      { concurrency: -1 },
      { leaseTtlSeconds: 0 },
      { floors: null },
      { floors: { batch: 2 } },
      { floors: { lunch: 0.1 } },
      { speed: 1 },
    ])
      refused(() => validateSettingsPatch(bad as never));
  });

  it('submit takes an array; each unit must be in the API id forms of its tenant, with sane numbers', () => {
    ok(() => validateSubmissions([unit as never]));
    refused(() => validateSubmissions(null as never));
    refused(() => validateSubmissions({ runId: 'x' } as never));
    refused(() => validateSubmissions(Array.from({ length: MAX_UNITS_PER_SUBMIT + 1 }, () => unit) as never));
    expect(isWellFormedUnit(unit)).toBe(true);
    expect(isWellFormedUnit({ ...unit, runId: `batch-acme-${'c'.repeat(16)}-9999`, attempt: 3 })).toBe(true);
    expect(isWellFormedUnit({ ...unit, admitNow: true, fairnessKey: 'user-42' })).toBe(true);
    for (const bad of [
      null,
      { ...unit, runId: 'r1' },
      { ...unit, runId: `run-other-${'ab'.repeat(10)}` },
      { ...unit, runId: `batch-acme-${'c'.repeat(16)}-10000` },
      { ...unit, priority: 'urgent' },
      { ...unit, cost: NaN },
      { ...unit, cost: 1e12 },
      { ...unit, attempt: -1 },
      { ...unit, attempt: 1e9 },
      { ...unit, redrive: 'yes' },
      { ...unit, admitNow: 'yes' },
      { ...unit, fairnessKey: '' },
      { ...unit, fairnessKey: 'a b' },
      { ...unit, fairnessKey: '#3' },
      { ...unit, fairnessKey: 'k'.repeat(65) },
      { ...unit, fairnessKey: 42 },
    ])
      expect(isWellFormedUnit(bad), JSON.stringify(bad)).toBe(false);
  });

  it("topUps takes a list of well-formed requests, at most a submit's worth", () => {
    const req = { runId: `run-acme-${'ab'.repeat(10)}`, attempt: 0, tokens: 100 };
    ok(() => validateTopUps([req, { ...req, attempt: 2 }]));
    ok(() => validateTopUps([]));
    refused(() => validateTopUps(null as never));
    refused(() => validateTopUps([req, { ...req, tokens: NaN }]));
    refused(() => validateTopUps([{ ...req, runId: 7 } as never]));
    refused(() => validateTopUps(Array.from({ length: MAX_UNITS_PER_SUBMIT + 1 }, () => req)));
  });

  it('a malformed unit is refused alone: its neighbours in the same message are submitted', () => {
    const seen: unknown[][] = [];
    const good2 = { ...unit, runId: `run-acme-${'cd'.repeat(10)}` };
    const results = submitEach([unit, { ...unit, runId: 'r1' }, null, good2], (good) => {
      seen.push(good);
      return good.map((u) => ({ runId: u.runId, accepted: true, duplicate: false, held: false }));
    });
    expect(seen).toEqual([[unit, good2]]);
    expect(results.map((r) => r.accepted)).toEqual([true, false, false, true]);
    expect(results[1]).toMatchObject({ runId: 'r1', code: 'invalid_unit' });
    expect(results[2]).toMatchObject({ runId: '', code: 'invalid_unit' });
    expect(results[3]?.runId).toBe(good2.runId);
    expect(submitEach([null], () => expect.fail('nothing well-formed to submit'))).toHaveLength(1);
  });

  it('drainNow takes nothing or { intake: refuse | hold }', () => {
    ok(() => validateDrain(undefined));
    ok(() => validateDrain({ intake: 'hold' }));
    refused(() => validateDrain({ intake: 'now' } as never));
    refused(() => validateDrain('hold' as never));
  });
});
