import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import { ApiError } from '../../contract/errors';
import type { ApiContext } from '../context';
import { WebhookSecretPostSchema } from '../intake/event-schemas';
import { parseOr400 } from '../intake/validation';
import { tenantOf } from '../middleware/auth';

/**
 * Per-tenant, per-source webhook secrets. `POST` creates or rotates one and shows it exactly once;
 * `GET` lists the sources that have one (never the secrets); `DELETE ?source=` removes one.
 */
export function webhookSecretsRouter(ctx: ApiContext): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    const tenant = tenantOf(res, 'manage webhook secrets').tenant;
    const { source } = parseOr400(WebhookSecretPostSchema, req.body ?? {});
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    const rotated = (await ctx.store.events.secretFor(tenant, source)) !== undefined;
    const limit = ctx.eventCaps.maxWebhookSecrets;
    if (!rotated && (await ctx.store.events.listSecrets(tenant)).length >= limit)
      throw new ApiError(
        'conflict',
        `A tenant may hold ${limit} webhook secrets (one per source); delete one before adding another.`,
        { limit },
      );
    await ctx.store.events.putSecret(tenant, source, secret, ctx.now());
    res.status(rotated ? 200 : 201).json({ source, secret, rotated });
  });

  router.get('/', async (_req, res) => {
    const tenant = tenantOf(res, 'read webhook secrets').tenant;
    const items = (await ctx.store.events.listSecrets(tenant)).map((s) => ({
      source: s.source,
      createdAt: new Date(s.createdAt).toISOString(),
    }));
    res.json({ items });
  });

  router.delete('/', async (req, res) => {
    const tenant = tenantOf(res, 'manage webhook secrets').tenant;
    const source = typeof req.query.source === 'string' ? req.query.source : '';
    if (!(await ctx.store.events.deleteSecret(tenant, source)))
      throw ApiError.notFound(`Webhook secret for ${source}`);
    res.status(204).end();
  });

  return router;
}
