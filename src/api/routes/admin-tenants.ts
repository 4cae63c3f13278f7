import { Router } from 'express';
import type { TenantSettings } from '../../scheduler/types';
import { defaultTenantSettings } from '../../scheduler/tenants';
import type { TenantDefaults } from '../../config';
import type { ApiContext } from '../context';
import { ApiError } from '../../contract/errors';
import { generateApiKey, hashApiKey } from '../crypto/keys';
import { LedgerQuerySchema, TenantIdSchema, TenantPutSchema, type TenantPut } from '../intake/schemas';
import type { TenantRecord } from '../../stores/tenants/tenants';
import { parseOr400 } from '../intake/validation';

function mergeSettings(
  base: TenantSettings | undefined,
  put: TenantPut,
  defaults: TenantDefaults,
): TenantSettings {
  const current =
    base ?? defaultTenantSettings({ maxQueued: defaults.maxQueued, maxInFlight: defaults.maxInFlight });
  return {
    weight: put.weight ?? current.weight,
    maxQueued: put.maxQueued ?? current.maxQueued,
    maxInFlight: put.maxInFlight ?? current.maxInFlight,
    budget: put.budget ?? current.budget,
    onBudgetExhausted: put.onBudgetExhausted ?? current.onBudgetExhausted ?? 'fail',
  };
}

function tenantIdParam(raw: string): string {
  return parseOr400(TenantIdSchema, raw, ['tenantId']);
}

async function knownTenant(ctx: ApiContext, raw: string): Promise<TenantRecord> {
  const record = await ctx.store.tenants.get(tenantIdParam(raw));
  if (!record) throw ApiError.notFound(`Tenant ${raw}`);
  return record;
}

const tenantLink = (tenant: string) => `/v1/admin/tenants/${tenant}`;

/** `/v1/admin/tenants`: create, update, list, rotate keys, read the ledger. Admin only (guarded by the caller). */
export function adminTenantsRouter(ctx: ApiContext): Router {
  const router = Router();

  router.get('/', async (_req, res) => {
    res.json({ tenants: await ctx.store.tenants.list() });
  });

  router.put('/:tenantId', async (req, res) => {
    const tenant = tenantIdParam(req.params.tenantId);
    const put = parseOr400(TenantPutSchema, req.body ?? {});
    const existing = await ctx.store.tenants.get(tenant);
    const settings = mergeSettings(existing?.settings, put, ctx.tenantDefaults);
    // The scheduler first: if it is unreachable nothing is stored, and on creation no key is lost.
    await ctx.fleet.upsertTenant(tenant, settings);
    const now = ctx.now();
    if (!existing) {
      const apiKey = generateApiKey();
      if (await ctx.store.tenants.create(tenant, settings, hashApiKey(apiKey), now)) {
        ctx.log.info({ tenant }, 'tenant created');
        res
          .location(tenantLink(tenant))
          .status(201)
          .json({ ...(await ctx.store.tenants.get(tenant)), apiKey });
        return;
      }
    }
    await ctx.store.tenants.update(tenant, settings, now);
    res.json(await ctx.store.tenants.get(tenant));
  });

  router.get('/:tenantId', async (req, res) => {
    res.json(await knownTenant(ctx, req.params.tenantId));
  });

  router.post('/:tenantId/keys', async (req, res) => {
    const { tenant } = await knownTenant(ctx, req.params.tenantId);
    const apiKey = generateApiKey();
    await ctx.store.tenants.setKeyHash(tenant, hashApiKey(apiKey), ctx.now());
    ctx.log.info({ tenant }, 'tenant key rotated');
    res.status(201).json({ tenant, apiKey });
  });

  router.get('/:tenantId/ledger', async (req, res) => {
    const { tenant } = await knownTenant(ctx, req.params.tenantId);
    const { limit } = parseOr400(LedgerQuerySchema, req.query);
    res.json({ tenant, entries: await ctx.fleet.ledgerEntries(tenant, limit) });
  });

  return router;
}
