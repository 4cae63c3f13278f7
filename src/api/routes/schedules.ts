import { Router, type Response } from 'express';
import type { ApiContext } from '../context';
import { ApiError } from '../../contract/errors';
import { principalOf, tenantOf } from '../middleware/auth';
import { parseScheduleRequest } from '../intake/parse-schedule';
import { assertFitsOnePayload } from '../intake/payload-limits';
import { enforceRunCaps, runCapIssues } from '../intake/run-caps';
import { ScheduleNameSchema, ScheduleOwnerQuerySchema } from '../intake/schedule-schemas';
import { parseOr400 } from '../intake/validation';

export const scheduleLink = (name: string) => `/v1/schedules/${encodeURIComponent(name)}`;

/** The schedule's name from the path: 400 for one the API could never have named (no lookup). */
function nameOf(raw: string): string {
  const parsed = ScheduleNameSchema.safeParse(raw);
  if (!parsed.success) throw ApiError.invalid([{ path: 'name', message: parsed.error.issues[0]!.message }]);
  return parsed.data;
}

/**
 * Whose schedule a request means: a tenant key's own tenant (`action` set: its ordinary key, not an
 * approver key); the admin token names it with `?tenant=`.
 */
function ownerOf(res: Response, query: unknown, action?: string): string {
  const { tenant } = parseOr400(ScheduleOwnerQuerySchema, query);
  const principal = principalOf(res);
  if (principal.kind === 'tenant') return action ? tenantOf(res, action).tenant : principal.tenant;
  if (tenant === undefined)
    throw ApiError.invalid([{ path: 'tenant', message: 'The admin token names the tenant: ?tenant=<id>.' }]);
  return tenant;
}

const drained = async (ctx: ApiContext) => (await ctx.schedulerState.get()).drain !== null;

/**
 * `/v1/schedules`: a tenant's recurring runs on Temporal Schedules. A tenant key manages its own;
 * the admin token reads, fires and deletes any (`?tenant=`) but writes none, as it submits no runs.
 */
export function schedulesRouter(ctx: ApiContext): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const { tenant } = parseOr400(ScheduleOwnerQuerySchema, req.query);
    const principal = principalOf(res);
    const items = await ctx.schedules.list(principal.kind === 'tenant' ? principal.tenant : tenant);
    res.json({ items });
  });

  router.put('/:name', async (req, res) => {
    const name = nameOf(req.params.name);
    const tenant = tenantOf(res, 'manage schedules');
    const def = parseScheduleRequest(req.body, ctx.agents, ctx.scheduleMinIntervalSeconds);
    enforceRunCaps(runCapIssues(ctx.runCaps, def.input, def.estimatedTokens, 'input', 'estimatedTokens'));
    assertFitsOnePayload(def, 'The schedule', 'Send a smaller input.');
    const { created, view } = await ctx.schedules.put(tenant.tenant, name, def, {
      drained: await drained(ctx),
    });
    ctx.log.info({ tenant: tenant.tenant, schedule: name, created }, 'schedule written');
    res
      .location(scheduleLink(name))
      .status(created ? 201 : 200)
      .json(view);
  });

  router.get('/:name', async (req, res) => {
    const name = nameOf(req.params.name);
    const view = await ctx.schedules.get(ownerOf(res, req.query), name);
    if (!view) throw ApiError.notFound(`Schedule ${name}`);
    res.json(view);
  });

  router.delete('/:name', async (req, res) => {
    const name = nameOf(req.params.name);
    const tenant = ownerOf(res, req.query, 'manage schedules');
    if (!(await ctx.schedules.delete(tenant, name))) throw ApiError.notFound(`Schedule ${name}`);
    ctx.log.info({ tenant, schedule: name }, 'schedule deleted');
    res.status(204).end();
  });

  router.post('/:name/trigger', async (req, res) => {
    const name = nameOf(req.params.name);
    const tenant = ownerOf(res, req.query, 'trigger schedules');
    // A drained fleet takes no new work from a schedule, fired by hand or not: refused as the door refuses.
    if (await drained(ctx))
      throw new ApiError(
        'draining',
        'The fleet is drained; schedules fire again after resume.',
        undefined,
        5,
      );
    if (!(await ctx.schedules.trigger(tenant, name))) throw ApiError.notFound(`Schedule ${name}`);
    res.status(202).json({ name, tenant, triggered: true, links: { self: scheduleLink(name) } });
  });

  return router;
}
