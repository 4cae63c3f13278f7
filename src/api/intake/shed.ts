import type { Refusal } from '../../scheduler/types';
import type { Response } from 'express';
import type { ApiContext } from '../context';
import { principalOf } from '../middleware/auth';
import { ApiError } from '../../contract/errors';
import { refusalCode } from '../../contract/schedules';
import type { TenantRecord } from '../../stores/tenants/tenants';
import { resyncTenant } from '../tenant-sync';

/** A scheduler refusal as the client sees it: 429 queue_full / budget_exhausted or 503 draining, with Retry-After. */
export function shedError(ctx: ApiContext, refusal: Refusal): ApiError {
  const code = refusalCode(refusal);
  ctx.metrics.sheds.inc({ reason: refusal.code });
  const message =
    refusal.code === 'unknown_tenant'
      ? 'The scheduler does not know this tenant yet; retry shortly.'
      : refusal.message || `Refused: ${refusal.code}.`;
  return new ApiError(code, message, undefined, Math.max(1, Math.ceil(refusal.retryAfterSeconds)));
}

/**
 * 429 rate_limited for a tenant over its submission rate (`cost`: units submitted); counted as a shed.
 * `peek` refuses as `take` would but charges nothing, for work whose cost is known only once it is
 * let in (an event's runs), which is then charged with {@link chargeSubmissions}.
 */
export async function rateLimit(
  ctx: ApiContext,
  tenant: string,
  cost = 1,
  mode: 'take' | 'peek' = 'take',
): Promise<void> {
  const taken = await ctx.submitLimiter.take(tenant, cost, mode);
  if (taken.ok) return;
  ctx.metrics.sheds.inc({ reason: 'rate_limited' });
  throw new ApiError(
    'rate_limited',
    `Tenant ${tenant} is submitting more than ${ctx.tenantDefaults.ratePerSecond} units per second.`,
    undefined,
    taken.retryAfterSeconds,
  );
}

/** Charges `cost` submission units let in after a `peek` (the bucket may go into debt). */
export async function chargeSubmissions(ctx: ApiContext, tenant: string, cost: number): Promise<void> {
  if (cost > 0) await ctx.submitLimiter.take(tenant, cost, 'charge');
}

/**
 * 429 rate_limited for a tenant over its rate of other requests (reads, cancels, decisions, resumes;
 * `cost`: how much fleet work the request does). The admin token is not limited.
 */
export async function rateLimitRequest(ctx: ApiContext, res: Response, cost = 1): Promise<void> {
  const principal = principalOf(res);
  if (principal.kind === 'tenant') await chargeRequest(ctx, principal.tenant, cost);
}

/** 429 rate_limited for `tenant` over its request rate (a signed delivery's tenant, known before any key). */
export async function chargeRequest(ctx: ApiContext, tenant: string, cost = 1): Promise<void> {
  const taken = await ctx.requestLimiter.take(tenant, cost);
  if (taken.ok) return;
  ctx.metrics.sheds.inc({ reason: 'rate_limited' });
  throw new ApiError(
    'rate_limited',
    `Tenant ${tenant} is sending more than ${ctx.tenantDefaults.requestRatePerSecond ?? ctx.tenantDefaults.ratePerSecond} requests per second.`,
    undefined,
    taken.retryAfterSeconds,
  );
}

/**
 * Calls the fleet; when the scheduler answers unknown_tenant (it restarted without this tenant, or the
 * tenant was created while it was away), re-sends the stored settings and tries once more.
 */
export async function withTenantSync<R extends { accepted: boolean } & Partial<Refusal>>(
  ctx: ApiContext,
  tenant: TenantRecord,
  call: () => Promise<R>,
): Promise<R> {
  const first = await call();
  if (first.accepted || first.code !== 'unknown_tenant') return first;
  await resyncTenant(ctx.fleet, tenant, ctx.log);
  return call();
}
