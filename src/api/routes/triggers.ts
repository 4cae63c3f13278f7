import { Router } from 'express';
import { ApiError } from '../../contract/errors';
import type { TriggerSpec } from '../../contract/triggers';
import type { ApiContext } from '../context';
import { TriggerNameSchema, TriggerPutSchema } from '../intake/event-schemas';
import { parseOr400 } from '../intake/validation';
import { enforceRunCaps, runCapIssues } from '../intake/run-caps';
import { unknownAgent } from '../intake/parse-requests';
import { tenantOf } from '../middleware/auth';

const triggerLink = (name: string) => `/v1/triggers/${name}`;

const view = (name: string, spec: TriggerSpec, updatedAt: number) => ({
  name,
  ...spec,
  updatedAt: new Date(updatedAt).toISOString(),
  links: { self: triggerLink(name) },
});

/** Per-tenant triggers: `PUT|GET|DELETE /v1/triggers/:name`, `GET /v1/triggers`. */
export function triggersRouter(ctx: ApiContext): Router {
  const router = Router();

  const nameOf = (raw: string): string => {
    if (!TriggerNameSchema.safeParse(raw).success) throw ApiError.notFound(`Trigger ${raw}`);
    return raw;
  };

  router.put('/:name', async (req, res) => {
    const tenant = tenantOf(res, 'manage triggers').tenant;
    const name = parseOr400(TriggerNameSchema, req.params.name);
    const body = parseOr400(TriggerPutSchema, req.body ?? {});
    if (!ctx.agents.get(body.agent)) throw unknownAgent(body.agent, ctx.agents);
    if (body.estimatedTokens !== undefined)
      enforceRunCaps(runCapIssues(ctx.runCaps, undefined, body.estimatedTokens, 'input', 'estimatedTokens'));
    const spec: TriggerSpec = {
      eventType: body.eventType,
      filter: body.filter,
      ...(body.sources !== undefined ? { sources: body.sources } : {}),
      agent: body.agent,
      priority: body.priority,
      ...(body.input !== undefined ? { input: body.input } : {}),
      ...(body.estimatedTokens !== undefined ? { estimatedTokens: body.estimatedTokens } : {}),
      ...(body.fairnessKey !== undefined ? { fairnessKey: body.fairnessKey } : {}),
    };
    const { maxTriggers, maxTriggerInputBytes } = ctx.eventCaps;
    if (body.input !== undefined) {
      const bytes = Buffer.byteLength(JSON.stringify(body.input));
      if (bytes > maxTriggerInputBytes)
        throw new ApiError(
          'payload_too_large',
          `A trigger's input may take ${maxTriggerInputBytes} bytes as compact JSON; this one takes ${bytes}.`,
          { limitBytes: maxTriggerInputBytes, bytes },
        );
    }
    if (!(await ctx.store.events.getTrigger(tenant, name))) {
      const held = (await ctx.store.events.listTriggers(tenant)).length;
      if (held >= maxTriggers)
        throw new ApiError(
          'conflict',
          `A tenant may hold ${maxTriggers} triggers; delete one before adding another.`,
          { limit: maxTriggers },
        );
    }
    const now = ctx.now();
    const created = await ctx.store.events.putTrigger(tenant, name, spec, now);
    res
      .location(triggerLink(name))
      .status(created ? 201 : 200)
      .json(view(name, spec, now));
  });

  router.get('/', async (_req, res) => {
    const tenant = tenantOf(res, 'read triggers').tenant;
    const triggers = await ctx.store.events.listTriggers(tenant);
    res.json({ items: triggers.map((t) => view(t.name, t.spec, t.updatedAt)) });
  });

  router.get('/:name', async (req, res) => {
    const tenant = tenantOf(res, 'read triggers').tenant;
    const name = nameOf(req.params.name);
    const found = await ctx.store.events.getTrigger(tenant, name);
    if (!found) throw ApiError.notFound(`Trigger ${name}`);
    res.json(view(name, found.spec, found.updatedAt));
  });

  router.delete('/:name', async (req, res) => {
    const tenant = tenantOf(res, 'manage triggers').tenant;
    const name = nameOf(req.params.name);
    if (!(await ctx.store.events.deleteTrigger(tenant, name))) throw ApiError.notFound(`Trigger ${name}`);
    res.status(204).end();
  });

  return router;
}
