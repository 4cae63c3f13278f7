import { Router, type Response } from 'express';
import type { TenantSettings } from '../../scheduler/types';
import { defaultTenantSettings } from '../../scheduler/tenants';
import type { TenantDefaults } from '../../config';
import type { ApiContext } from '../context';
import { ApiError } from '../../contract/errors';
import { generateApiKey, hashApiKey } from '../crypto/keys';
import { LedgerQuerySchema, TenantIdSchema, TenantPutSchema, type TenantPut } from '../intake/schemas';
import { schedulerSettings, type TenantRecord } from '../../stores/tenants/tenants';
import { parseOr400 } from '../intake/validation';

function mergeSettings(
  base: TenantSettings | undefined,
  put: TenantPut,
  defaults: TenantDefaults,
): TenantSettings {
  const current =
    base ?? defaultTenantSettings({ maxQueued: defaults.maxQueued, maxInFlight: defaults.maxInFlight });
  // keyWeights replace the previous map as a whole; null or {} clears it, absent keeps it.
  const keyWeights = put.keyWeights === undefined ? current.keyWeights : (put.keyWeights ?? undefined);
  return {
    weight: put.weight ?? current.weight,
    maxQueued: put.maxQueued ?? current.maxQueued,
    maxInFlight: put.maxInFlight ?? current.maxInFlight,
    budget: put.budget ?? current.budget,
    onBudgetExhausted: put.onBudgetExhausted ?? current.onBudgetExhausted ?? 'fail',
    ...(keyWeights && Object.keys(keyWeights).length > 0 ? { keyWeights } : {}),
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

/** `/v1/admin/tenants`: create, update, list, rotate keys, approver keys, disable, delete, read the ledger. Admin only (guarded by the caller). */
export function adminTenantsRouter(ctx: ApiContext): Router {
  const router = Router();

  router.get('/', async (_req, res) => {
    res.json({ tenants: await ctx.store.tenants.list() });
  });

  router.put('/:tenantId', async (req, res) => {
    const tenant = tenantIdParam(req.params.tenantId);
    const put = parseOr400(TenantPutSchema, req.body ?? {});
    const existing = await ctx.store.tenants.get(tenant);
    // A deleted tenant's runs stay in Temporal under its id: a new tenant of that id would read them.
    if (!existing && (await ctx.fleet.listRuns({ tenant, limit: 1 })).items.length > 0) {
      throw new ApiError(
        'conflict',
        `Tenant id ${tenant} still has runs in Temporal from a deleted tenant; choose another id, or create it once they have passed the namespace's retention.`,
        { runsRemain: true },
      );
    }
    const settings = mergeSettings(existing?.settings, put, ctx.tenantDefaults);
    // The scheduler first: if it is unreachable nothing is stored, and on creation no key is lost.
    // A disabled tenant stays held (nothing in flight) whatever its new settings.
    await ctx.fleet.upsertTenant(
      tenant,
      schedulerSettings({ disabled: existing?.disabled ?? false, settings }),
    );
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

  /**
   * Disable: the tenant's keys and signed deliveries get 403 tenant_disabled, and its queued runs stay
   * queued (kept, not admitted; runs already admitted finish) until it is enabled again. The store
   * first, so its keys are refused at once; the scheduler then holds its admissions.
   */
  const setDisabled = async (raw: string, disabled: boolean, res: Response) => {
    const { tenant } = await knownTenant(ctx, raw);
    await ctx.store.tenants.setDisabled(tenant, disabled, ctx.now());
    const record = await knownTenant(ctx, tenant);
    await ctx.fleet.upsertTenant(tenant, schedulerSettings(record));
    ctx.log.info({ tenant }, disabled ? 'tenant disabled' : 'tenant enabled');
    res.json(record);
  };
  router.post('/:tenantId/disable', (req, res) => setDisabled(req.params.tenantId, true, res));
  router.post('/:tenantId/enable', (req, res) => setDisabled(req.params.tenantId, false, res));

  /**
   * Creates (or replaces) the tenant's approver key, shown once. From then on only that key (or the
   * admin) decides the tenant's gates; its ordinary keys get 403 for approve and reject.
   */
  router.post('/:tenantId/approver-key', async (req, res) => {
    const { tenant } = await knownTenant(ctx, req.params.tenantId);
    const approverKey = generateApiKey();
    await ctx.store.tenants.setApproverKeyHash(tenant, hashApiKey(approverKey), ctx.now());
    ctx.log.info({ tenant }, 'tenant approver key set');
    res.status(201).json({ tenant, approverKey });
  });

  /**
   * Deletes a disabled tenant with nothing queued, in flight or awaiting approval (409 naming what
   * blocks it otherwise): its keys, triggers, webhook secrets, events, webhook endpoints with their
   * deliveries, and settings leave the store. Its runs' histories stay in Temporal, and the id cannot be
   * created again while they are listed there.
   */
  router.delete('/:tenantId', async (req, res) => {
    const record = await knownTenant(ctx, req.params.tenantId);
    const { tenant } = record;
    if (!record.disabled) {
      throw new ApiError(
        'conflict',
        `Tenant ${tenant} is enabled; disable it first (POST /v1/admin/tenants/${tenant}/disable).`,
        { disabled: false },
      );
    }
    const status = await ctx.fleet.tenantStatus(tenant);
    const queued = status ? Object.values(status.queuedByPriority).reduce((a, b) => a + b, 0) : 0;
    const inFlight = status?.inFlight ?? 0;
    const gated = await ctx.fleet.listRuns({ tenant, status: 'awaiting_approval', limit: 1 });
    const awaitingApproval = gated.items.length;
    if (queued + inFlight + awaitingApproval > 0) {
      throw new ApiError(
        'conflict',
        `Tenant ${tenant} still has active runs (${queued} queued, ${inFlight} in flight` +
          `${awaitingApproval > 0 ? ', some awaiting approval' : ''}); cancel them or let them finish first.`,
        { queued, inFlight, awaitingApproval: awaitingApproval > 0 },
      );
    }
    await ctx.store.tenants.delete(tenant);
    // Its schedules go with it (a firing of a deleted tenant would only be refused).
    const schedules = await ctx.schedules.list(tenant);
    for (const s of schedules) await ctx.schedules.delete(tenant, s.name);
    ctx.log.info({ tenant, schedules: schedules.length }, 'tenant deleted');
    res.status(204).end();
  });

  router.get('/:tenantId/ledger', async (req, res) => {
    const { tenant } = await knownTenant(ctx, req.params.tenantId);
    const { limit } = parseOr400(LedgerQuerySchema, req.query);
    res.json({ tenant, entries: await ctx.fleet.ledgerEntries(tenant, limit) });
  });

  return router;
}
