import {
  FAIRNESS_KEY_PATTERN,
  MAX_ATTEMPT,
  MAX_TENANTS_PER_UPSERT,
  MAX_TOKENS,
  MAX_UNITS_PER_SUBMIT,
  POOL_NAME_PATTERN,
  TENANT_ID_PATTERN,
  isApiRunId,
} from '../scheduler/limits';
import { PRIORITIES } from '../scheduler/types';
import type { BudgetPeriod, SubmitResult, TenantSettings, UnitSubmission } from '../scheduler/types';
import type { SettingsPatch } from '../contract/scheduler-messages';

/*
 * Update validators. They run synchronously before the handler: a throw rejects the update, writes
 * no history and leaves the scheduler as it was, so nothing a client sends can wedge it in a
 * workflow-task retry loop.
 */

const PERIODS: readonly BudgetPeriod[] = ['hour', 'day', 'month', 'none'];

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0;
const isNumberIn = (x: unknown, min: number, max: number): x is number =>
  typeof x === 'number' && Number.isFinite(x) && x >= min && x <= max;
const show = (x: unknown): string => {
  try {
    return String(JSON.stringify(x)).slice(0, 200);
  } catch {
    return String(x).slice(0, 200);
  }
};

function refuse(what: string, x: unknown): never {
  throw new TypeError(`${what}: ${show(x)}`);
}

/** The message: an array of at most MAX_UNITS_PER_SUBMIT. Each unit is checked on its own (`isWellFormedUnit`). */
export function validateSubmissions(units: UnitSubmission[]): void {
  if (!Array.isArray(units)) refuse('submit expects an array of units', units);
  if (units.length > MAX_UNITS_PER_SUBMIT)
    refuse(`submit takes at most ${MAX_UNITS_PER_SUBMIT} units`, units.length);
}

/** One unit in the API's id forms (of its own tenant) with sane numbers. */
export function isWellFormedUnit(u: unknown): u is UnitSubmission {
  return (
    isObject(u) &&
    typeof u.runId === 'string' &&
    typeof u.tenant === 'string' &&
    TENANT_ID_PATTERN.test(u.tenant) &&
    isApiRunId(u.runId, u.tenant) &&
    PRIORITIES.includes(u.priority as never) &&
    isNumberIn(u.cost, 0, MAX_TOKENS) &&
    (u.attempt === undefined || (isCount(u.attempt) && u.attempt <= MAX_ATTEMPT)) &&
    (u.redrive === undefined || typeof u.redrive === 'boolean') &&
    (u.usedTokens === undefined || isNumberIn(u.usedTokens, 0, MAX_TOKENS)) &&
    (u.pool === undefined || (typeof u.pool === 'string' && POOL_NAME_PATTERN.test(u.pool))) &&
    (u.admitNow === undefined || typeof u.admitNow === 'boolean') &&
    (u.fairnessKey === undefined ||
      (typeof u.fairnessKey === 'string' && FAIRNESS_KEY_PATTERN.test(u.fairnessKey)))
  );
}

/** A malformed unit never becomes valid: its sender should not come back soon. */
const INVALID_UNIT_RETRY_SECONDS = 3600;

/**
 * Submits the well-formed units to the core and refuses each malformed one by itself
 * (`invalid_unit`), so one bad unit does not fail the others coalesced into the same message.
 * One result per unit, in order.
 */
export function submitEach(
  units: readonly unknown[],
  submit: (good: UnitSubmission[]) => SubmitResult[],
): SubmitResult[] {
  const good = units.filter(isWellFormedUnit);
  const results = good.length > 0 ? submit(good) : [];
  let next = 0;
  return units.map((u): SubmitResult => {
    if (isWellFormedUnit(u)) return results[next++]!;
    const runId = isObject(u) && typeof u.runId === 'string' ? u.runId.slice(0, 200) : '';
    return {
      runId,
      accepted: false,
      code: 'invalid_unit',
      message: `Malformed unit (not in the API's forms): ${show(u)}`,
      retryAfterSeconds: INVALID_UNIT_RETRY_SECONDS,
    };
  });
}

function validateTenantSettings(s: unknown): asserts s is TenantSettings {
  if (
    !isObject(s) ||
    !isNumberIn(s.weight, Number.MIN_VALUE, 1_000_000) ||
    !isCount(s.maxQueued) ||
    !isCount(s.maxInFlight) ||
    !isObject(s.budget) ||
    !(s.budget.tokens === null || isNumberIn(s.budget.tokens, 0, Number.MAX_SAFE_INTEGER)) ||
    !PERIODS.includes(s.budget.period as BudgetPeriod)
  ) {
    refuse('malformed tenant settings', s);
  }
}

export function validateUpsertTenants(list: { tenant: string; settings: TenantSettings }[]): void {
  if (!Array.isArray(list)) refuse('upsertTenants expects an array of { tenant, settings }', list);
  if (list.length > MAX_TENANTS_PER_UPSERT)
    refuse(`upsertTenants takes at most ${MAX_TENANTS_PER_UPSERT} tenants`, list.length);
  for (const t of list as unknown[]) {
    if (!isObject(t) || typeof t.tenant !== 'string' || !TENANT_ID_PATTERN.test(t.tenant))
      refuse('malformed tenant id', t);
    validateTenantSettings(t.settings);
  }
}

/** The settings a patch may name. */
const SETTINGS: readonly string[] = [
  'concurrency',
  'floors',
  'leaseTtlSeconds',
  'globalMaxQueued',
  'interactiveReserve',
  'maxWaitSeconds',
] satisfies (keyof SettingsPatch)[];

export function validateSettingsPatch(patch: SettingsPatch): void {
  if (!isObject(patch)) refuse('patchSettings expects an object', patch);
  const p = patch as Record<string, unknown>;
  for (const key of Object.keys(p)) {
    if (!SETTINGS.includes(key)) refuse('unknown setting', key);
  }
  for (const key of ['concurrency', 'leaseTtlSeconds', 'globalMaxQueued'] as const) {
    if (p[key] !== undefined && !isCount(p[key])) refuse(`${key} must be a whole number ≥ 0`, p[key]);
  }
  if (p.leaseTtlSeconds !== undefined && (p.leaseTtlSeconds as number) < 1)
    refuse('leaseTtlSeconds must be ≥ 1', p.leaseTtlSeconds);
  if (p.interactiveReserve !== undefined && !isNumberIn(p.interactiveReserve, 0, 1))
    refuse('interactiveReserve must be in [0, 1]', p.interactiveReserve);
  if (p.floors !== undefined) {
    if (!isObject(p.floors)) refuse('floors must be an object', p.floors);
    const f = p.floors as Record<string, unknown>;
    for (const key of Object.keys(f)) {
      if (key !== 'standard' && key !== 'batch') refuse('unknown floor', key);
      if (f[key] !== undefined && !isNumberIn(f[key], 0, 1))
        refuse(`floors.${key} must be in [0, 1]`, f[key]);
    }
  }
  if (p.maxWaitSeconds !== undefined) {
    if (!isObject(p.maxWaitSeconds)) refuse('maxWaitSeconds must be an object', p.maxWaitSeconds);
    const w = p.maxWaitSeconds as Record<string, unknown>;
    for (const key of Object.keys(w)) {
      if (!(PRIORITIES as readonly string[]).includes(key)) refuse('unknown lane', key);
      if (w[key] !== null && w[key] !== undefined && !isCount(w[key]))
        refuse(`maxWaitSeconds.${key} must be a whole number ≥ 0 or null`, w[key]);
    }
  }
}

export function validateDrain(arg: { intake?: 'refuse' | 'hold' } | undefined): void {
  if (arg === undefined || arg === null) return;
  if (!isObject(arg)) refuse('drainNow expects { intake?: "refuse" | "hold" }', arg);
  if (arg.intake !== undefined && arg.intake !== 'refuse' && arg.intake !== 'hold')
    refuse('intake must be "refuse" or "hold"', arg.intake);
}

export function validateTopUp(req: { runId: string; attempt: number; tokens: number }): void {
  if (typeof req?.runId !== 'string' || !Number.isFinite(req.attempt) || !Number.isFinite(req.tokens))
    throw new TypeError('topUp expects { runId, attempt, tokens }');
}

/** Every request well formed (they come from this fleet's activities), at most a submit's worth. */
export function validateTopUps(reqs: { runId: string; attempt: number; tokens: number }[]): void {
  if (!Array.isArray(reqs)) refuse('topUps expects an array of { runId, attempt, tokens }', reqs);
  if (reqs.length > MAX_UNITS_PER_SUBMIT) refuse(`topUps takes at most ${MAX_UNITS_PER_SUBMIT}`, reqs.length);
  reqs.forEach(validateTopUp);
}
