import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import { ApiError } from '../../contract/errors';
import type { WebhookDeliveryView, WebhookView } from '../../contract/webhooks';
import type { DeliveryView, WebhookEndpoint } from '../../stores/webhooks/webhooks';
import type { ApiContext } from '../context';
import { DeliveryListQuerySchema, WebhookIdSchema, WebhookPostSchema } from '../intake/webhook-schemas';
import { parseOr400 } from '../intake/validation';
import { tenantOf } from '../middleware/auth';
import { newWebhookSecret } from '../webhooks/signing';
import { targetProblem } from '../webhooks/targets';

const iso = (ms: number) => new Date(ms).toISOString();

const endpointView = (ep: WebhookEndpoint): WebhookView => ({
  id: ep.id,
  url: ep.url,
  events: ep.events,
  description: ep.description,
  createdAt: iso(ep.createdAt),
});

const deliveryView = (d: DeliveryView): WebhookDeliveryView => ({
  eventId: d.eventId,
  type: d.type,
  state: d.state,
  createdAt: iso(d.createdAt),
  nextAttemptAt: d.nextAttemptAt === null ? null : iso(d.nextAttemptAt),
  attempts: d.attempts.map((a) => ({
    n: a.n,
    at: iso(a.at),
    status: a.status,
    answer: a.answer,
    error: a.error,
    durationMs: a.durationMs,
  })),
});

/**
 * Webhooks out (docs/webhooks.md): a tenant's endpoints for run events. `POST` registers one and
 * shows its signing secret exactly once; `GET` lists them (never the secret); `DELETE /:id` removes
 * one with its deliveries; `GET /:id/deliveries` lists its deliveries with every attempt.
 */
export function webhooksRouter(ctx: ApiContext): Router {
  const router = Router();

  const endpointOf = async (tenant: string, raw: string): Promise<WebhookEndpoint> => {
    const id = parseOr400(WebhookIdSchema, raw, ['id']);
    const ep = await ctx.store.webhooks.getEndpoint(tenant, id);
    if (!ep) throw ApiError.notFound(`Webhook ${id}`);
    return ep;
  };

  router.post('/', async (req, res) => {
    const tenant = tenantOf(res, 'register webhooks').tenant;
    const body = parseOr400(WebhookPostSchema, req.body ?? {});
    const problem = targetProblem(body.url, ctx.webhookTargets);
    if (problem) throw ApiError.invalid([{ path: 'url', message: problem }], `url: ${problem}`);
    const ep: WebhookEndpoint = {
      id: `wh_${randomBytes(12).toString('base64url')}`,
      tenant,
      url: body.url,
      events: body.events,
      description: body.description,
      createdAt: ctx.now(),
    };
    const secret = newWebhookSecret();
    const limit = ctx.eventCaps.maxWebhookEndpoints;
    if (!(await ctx.store.webhooks.createEndpoint(ep, secret, limit)))
      throw new ApiError(
        'conflict',
        `A tenant may register ${limit} webhook endpoints; delete one before adding another.`,
        { limit },
      );
    res.status(201).json({ ...endpointView(ep), secret });
  });

  router.get('/', async (_req, res) => {
    const tenant = tenantOf(res, 'read webhooks').tenant;
    res.json({ items: (await ctx.store.webhooks.listEndpoints(tenant)).map(endpointView) });
  });

  router.get('/:id', async (req, res) => {
    const tenant = tenantOf(res, 'read webhooks').tenant;
    res.json(endpointView(await endpointOf(tenant, req.params.id)));
  });

  router.delete('/:id', async (req, res) => {
    const tenant = tenantOf(res, 'delete webhooks').tenant;
    const ep = await endpointOf(tenant, req.params.id);
    if (!(await ctx.store.webhooks.deleteEndpoint(tenant, ep.id)))
      throw ApiError.notFound(`Webhook ${ep.id}`);
    res.status(204).end();
  });

  router.get('/:id/deliveries', async (req, res) => {
    const tenant = tenantOf(res, 'read webhook deliveries').tenant;
    const ep = await endpointOf(tenant, req.params.id);
    const { limit } = parseOr400(DeliveryListQuerySchema, req.query);
    const items = await ctx.store.webhooks.listDeliveries(ep.id, limit);
    res.json({ items: items.map(deliveryView) });
  });

  return router;
}
