import { Router, type Response } from 'express';
import { mayAccess, tenantOf } from '../middleware/auth';
import type { ApiContext } from '../context';
import { ApiError } from '../../contract/errors';
import type { BatchSpec, BatchView } from '../../contract/fleet-port';
import { randomHex } from '../crypto/keys';
import { parseBatchRequest } from '../intake/parse-requests';
import { BatchIdSchema, type BatchRequest } from '../intake/schemas';
import { assertFitsOnePayload } from '../intake/payload-limits';
import { enforceRunCaps, runCapIssues } from '../intake/run-caps';
import { rateLimit, rateLimitRequest, shedError, withTenantSync } from '../intake/shed';
import { addBatchPartRoutes, storedBatch, unstartedView } from './batch-parts';

export const batchLink = (batchId: string) => `/v1/batches/${batchId}`;

async function ownedBatch(ctx: ApiContext, res: Response, batchId: string): Promise<BatchView> {
  const view = BatchIdSchema.safeParse(batchId).success ? await ctx.fleet.getBatch(batchId) : null;
  if (!view || !mayAccess(res, view.tenant)) throw ApiError.notFound(`Batch ${batchId}`);
  return view;
}

/** A batch sent in parts that has not started yet (open, or committed but not yet started), or null. */
async function unstarted(ctx: ApiContext, res: Response, batchId: string) {
  const stored = await storedBatch(ctx, res, batchId);
  return stored && !stored.started ? stored : null;
}

/** The batch's keys as its spec carries them: per-item keys only when some item names one. */
function batchKeys(r: BatchRequest): Pick<BatchSpec, 'fairnessKey' | 'fairnessKeys'> {
  return {
    ...(r.fairnessKey !== undefined ? { fairnessKey: r.fairnessKey } : {}),
    ...(r.fairnessKeys?.some((k) => k !== null) ? { fairnessKeys: r.fairnessKeys } : {}),
  };
}

export function batchesRouter(ctx: ApiContext): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    const tenant = tenantOf(res, 'submit batches');
    const batch = parseBatchRequest(req.body, ctx.agents);
    const perItem = batch.request.estimatedTokensPerItem;
    enforceRunCaps(
      batch.items.flatMap((item, i) => {
        // Each item reserves the larger of the batch's figure and its own estimate.
        const own = batch.estimates[i] as number;
        const blamed = perItem === undefined || own >= perItem ? `items.${i}` : 'estimatedTokensPerItem';
        return runCapIssues(ctx.runCaps, item, Math.max(perItem ?? 0, own), `items.${i}`, blamed);
      }),
    );
    await rateLimit(ctx, tenant.tenant, batch.items.length);
    const batchId = `batch-${tenant.tenant}-${randomHex(16)}`;
    const spec = {
      batchId,
      tenant: tenant.tenant,
      agent: batch.agent.name,
      priority: batch.request.priority,
      items: batch.items,
      estimatedTokensPerItem: batch.estimatedTokensPerItem,
      onBudgetExhausted: tenant.settings.onBudgetExhausted ?? 'fail',
      ...batchKeys(batch.request),
      createdAt: new Date(ctx.now()).toISOString(),
    };
    assertFitsOnePayload(spec, 'The batch', 'Split the items into several smaller batches.');
    const result = await withTenantSync(ctx, tenant, () => ctx.fleet.createBatch(spec));
    if (!result.accepted) throw shedError(ctx, result);
    ctx.metrics.submissions.inc({ priority: spec.priority }, spec.items.length);
    res
      .location(batchLink(batchId))
      .status(202)
      .json({ batchId, total: spec.items.length, links: { self: batchLink(batchId) } });
  });

  addBatchPartRoutes(ctx, router);

  router.get('/:batchId', async (req, res) => {
    const waiting = await unstarted(ctx, res, req.params.batchId);
    if (waiting) {
      res.json(unstartedView(waiting));
      return;
    }
    res.json({ ...(await ownedBatch(ctx, res, req.params.batchId)), state: 'committed' });
  });

  router.post('/:batchId/resume', async (req, res) => {
    if (await unstarted(ctx, res, req.params.batchId)) {
      throw new ApiError('conflict', `Batch ${req.params.batchId} has not started; commit it first.`);
    }
    const view = await ownedBatch(ctx, res, req.params.batchId);
    // A resume lists and re-drives up to every item: it costs one request per item.
    await rateLimitRequest(ctx, res, Math.max(0, view.total - 1));
    const resumed = await ctx.fleet.resumeBatch(view.batchId);
    res.status(202).json({ batchId: view.batchId, resumed, links: { self: batchLink(view.batchId) } });
  });

  return router;
}
