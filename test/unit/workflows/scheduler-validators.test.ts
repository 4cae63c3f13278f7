import { describe, expect, it } from 'vitest';
import {
  validateDrain,
  validateSettingsPatch,
  validateSubmissions,
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

  it('submit takes only the API id forms of the unit tenant, and sane numbers', () => {
    ok(() => validateSubmissions([unit as never]));
    ok(() =>
      validateSubmissions([{ ...unit, runId: `batch-acme-${'c'.repeat(16)}-9999`, attempt: 3 } as never]),
    );
    for (const bad of [
      null,
      [null],
      [{ ...unit, runId: 'r1' }],
      [{ ...unit, runId: `run-other-${'ab'.repeat(10)}` }],
      [{ ...unit, runId: `batch-acme-${'c'.repeat(16)}-10000` }],
      [{ ...unit, priority: 'urgent' }],
      [{ ...unit, cost: NaN }],
      [{ ...unit, cost: 1e12 }],
      [{ ...unit, attempt: -1 }],
      [{ ...unit, attempt: 1e9 }],
    ])
      refused(() => validateSubmissions(bad as never));
  });

  it('drainNow takes nothing or { intake: refuse | hold }', () => {
    ok(() => validateDrain(undefined));
    ok(() => validateDrain({ intake: 'hold' }));
    refused(() => validateDrain({ intake: 'now' } as never));
    refused(() => validateDrain('hold' as never));
  });
});
