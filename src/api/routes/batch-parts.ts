import type { Response, Router } from 'express';
import type { Logger } from 'pino';
import type { BatchItemStore, StoredBatch } from '../../stores/batch-items/batch-items';
import type { BatchVerdict } from '../../scheduler/types';
import { ApiError } from '../../contract/errors';
import type { FleetPort, StoredBatchSpec } from '../../contract/fleet-port';
import { canonicalHash } from '../crypto/canonical-json';
import { randomHex } from '../crypto/keys';
import type { ApiContext } from '../context';
import { mayAccess, tenantOf } from '../middleware/auth';
import { parseBatchOpen, parseBatchPart, unknownAgent } from '../intake/parse-requests';
import { BATCH_MAX_ITEMS, BatchIdSchema } from '../intake/schemas';
import { enforceRunCaps, runCapIssues } from '../intake/run-caps';
import { rateLimit, shedError, withTenantSync } from '../intake/shed';

/** An open batch nobody commits is forgotten after this long (with its items). */
export const OPEN_BATCH_TTL_MS = 24 * 60 * 60 * 1000;
/** Batches a tenant may hold open at once. */
export const MAX_OPEN_BATCHES = 16;

const link = (batchId: string) => `/v1/batches/${batchId}`;
const links = (batchId: string) => ({
  self: link(batchId),
  items: `${link(batchId)}/items`,
  commit: `${link(batchId)}/commit`,
});

/** The stored batch when the caller may see it (its tenant, or the admin token), else 404. */
export async function storedBatch(
  ctx: ApiContext,
  res: Response,
  batchId: string,
): Promise<StoredBatch | null> {
  if (!BatchIdSchema.safeParse(batchId).success) return null;
  const batch = await ctx.batchItems.get(batchId);
  return batch && mayAccess(res, batch.tenant) ? batch : null;
}

/** The caller's own stored batch (tenant keys only: the admin token sends no items), else 404. */
async function ownStoredBatch(ctx: ApiContext, res: Response, batchId: string, action: string) {
  const tenant = tenantOf(res, action);
  const batch = BatchIdSchema.safeParse(batchId).success ? await ctx.batchItems.get(batchId) : null;
  if (!batch || batch.tenant !== tenant.tenant) throw ApiError.notFound(`Batch ${batchId}`);
  return { tenant, batch };
}

/** What a batch sent in parts looks like to `GET /v1/batches/:batchId` before its workflow runs. */
export function unstartedView(batch: StoredBatch) {
  return {
    batchId: batch.batchId,
    tenant: batch.tenant,
    state: batch.state,
    total: batch.items,
    queued: batch.state === 'open' ? 0 : batch.items,
    running: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
  };
}

/**
 * The workflow's spec of a committed batch: its count, never its items. Its items' own fairness keys
 * (`keys`, from the store) do ride in it: at most 10,000 keys of up to 64 characters, about 670 KB as
 * JSON, within the start argument's 1.5 MiB.
 */
function specOf(batch: StoredBatch, keys: (string | null)[] | null): StoredBatchSpec {
  return {
    batchId: batch.batchId,
    tenant: batch.tenant,
    agent: batch.agent,
    priority: batch.priority,
    itemCount: batch.items,
    // As for a one-request batch: each item reserves at least the mean of the agent's estimates.
    estimatedTokensPerItem: Math.max(batch.tokensFloor, Math.ceil(batch.estimateSum / batch.items)),
    onBudgetExhausted: batch.onBudgetExhausted,
    ...(batch.fairnessKey !== undefined ? { fairnessKey: batch.fairnessKey } : {}),
    ...(keys ? { fairnessKeys: keys } : {}),
    createdAt: new Date(batch.createdAt).toISOString(),
  };
}

/**
 * Starts a committed batch's workflow (idempotent: its id is the batch's). Refused (queue full, budget):
 * the batch opens again, unless its workflow exists after all (another request started it meanwhile).
 */
export async function startCommitted(
  deps: { fleet: FleetPort; batchItems: BatchItemStore },
  batch: StoredBatch,
  withSync: (start: () => Promise<BatchVerdict>) => Promise<BatchVerdict> = (start) => start(),
): Promise<BatchVerdict> {
  const spec = specOf(batch, await deps.batchItems.readKeys(batch.batchId));
  const verdict = await withSync(() => deps.fleet.createBatch(spec));
  if (!verdict.accepted && (await deps.fleet.getBatch(batch.batchId)) === null) {
    await deps.batchItems.reopen(batch.batchId);
    return verdict;
  }
  await deps.batchItems.markStarted(batch.batchId);
  return { accepted: true };
}

/** Committed at least this long ago and not started: its committer died before starting it. */
export const ORPHAN_COMMIT_MS = 60_000;

/**
 * Starts the batches whose commit request died between freezing them and starting their workflow
 * (a client that retries its commit does the same itself). A refused one opens again.
 */
export async function startOrphanedBatches(
  deps: { fleet: FleetPort; batchItems: BatchItemStore; log: Logger },
  now = Date.now(),
): Promise<number> {
  let started = 0;
  for (const batch of await deps.batchItems.unstarted(now - ORPHAN_COMMIT_MS)) {
    const verdict = await startCommitted(deps, batch);
    if (verdict.accepted) started++;
    else
      deps.log.warn(
        { batchId: batch.batchId, code: verdict.code },
        'a committed batch was refused: open again',
      );
  }
  return started;
}

/** The routes of a batch sent in parts: open, append a part, commit. */
export function addBatchPartRoutes(ctx: ApiContext, router: Router): void {
  router.post('/open', async (req, res) => {
    const tenant = tenantOf(res, 'submit batches');
    const { request, agent } = parseBatchOpen(req.body, ctx.agents);
    const now = ctx.now();
    await ctx.batchItems.purgeOpen(now - OPEN_BATCH_TTL_MS);
    const open = await ctx.batchItems.countOpen(tenant.tenant, now - OPEN_BATCH_TTL_MS);
    if (open >= MAX_OPEN_BATCHES) {
      throw new ApiError(
        'conflict',
        `Tenant ${tenant.tenant} has ${open} batches open; at most ${MAX_OPEN_BATCHES} may be. Commit one first ` +
          '(an open batch is forgotten 24 hours after it was opened).',
        { limit: MAX_OPEN_BATCHES },
      );
    }
    const batchId = `batch-${tenant.tenant}-${randomHex(16)}`;
    await ctx.batchItems.create({
      batchId,
      tenant: tenant.tenant,
      agent: agent.name,
      priority: request.priority,
      tokensFloor: request.estimatedTokensPerItem ?? 0,
      onBudgetExhausted: tenant.settings.onBudgetExhausted ?? 'fail',
      ...(request.fairnessKey !== undefined ? { fairnessKey: request.fairnessKey } : {}),
      createdAt: now,
    });
    res
      .location(link(batchId))
      .status(201)
      .json({ batchId, state: 'open', total: 0, parts: 0, links: links(batchId) });
  });

  router.post('/:batchId/items', async (req, res) => {
    const { tenant, batch } = await ownStoredBatch(ctx, res, req.params.batchId, 'submit batches');
    const agent = ctx.agents.get(batch.agent);
    // The API may have restarted without the agents module the batch was opened with.
    if (!agent) throw unknownAgent(batch.agent, ctx.agents);
    const part = parseBatchPart(req.body, agent);
    enforceRunCaps(
      part.items.flatMap((item, i) =>
        runCapIssues(
          ctx.runCaps,
          item,
          Math.max(batch.tokensFloor, part.estimates[i]!),
          `items.${i}`,
          `items.${i}`,
        ),
      ),
    );
    // Items count against the tenant's queue when committed; a batch that could never fit is refused now.
    const maxItems = Math.min(BATCH_MAX_ITEMS, tenant.settings.maxQueued);
    await rateLimit(ctx, tenant.tenant, part.items.length);
    const outcome = await ctx.batchItems.append(
      batch.batchId,
      {
        part: part.part,
        // Keys join the hash only when sent, so a keyless part's retry matches what was stored before keys.
        hash: canonicalHash(
          part.fairnessKeys ? { items: part.items, fairnessKeys: part.fairnessKeys } : part.items,
        ),
        items: part.items,
        ...(part.fairnessKeys ? { fairnessKeys: part.fairnessKeys } : {}),
        estimateSum: part.estimates.reduce((a, b) => a + b, 0),
      },
      maxItems,
    );
    switch (outcome.kind) {
      case 'appended':
      case 'replayed':
        res.status(200).json({
          batchId: batch.batchId,
          part: part.part,
          firstIndex: outcome.firstIndex,
          count: outcome.count,
          total: outcome.total,
          replayed: outcome.kind === 'replayed',
          links: links(batch.batchId),
        });
        return;
      case 'missing':
        throw ApiError.notFound(`Batch ${batch.batchId}`);
      case 'conflict':
        throw new ApiError(
          'idempotency_conflict',
          `Part ${part.part} of batch ${batch.batchId} was already appended with other items; a part is appended once.`,
        );
      case 'committed':
        throw new ApiError('conflict', `Batch ${batch.batchId} is committed; no part can be added.`);
      case 'out_of_order':
        throw new ApiError(
          'conflict',
          `Batch ${batch.batchId} expects part ${outcome.expected} next (parts are numbered 0, 1, 2, … in order).`,
          { expected: outcome.expected },
        );
      case 'too_many':
        throw new ApiError(
          'invalid_request',
          `This part would bring the batch to ${outcome.total} items; it may hold at most ${outcome.limit} ` +
            `(${BATCH_MAX_ITEMS} per batch, and no more than the tenant's maxQueued, ${tenant.settings.maxQueued}).`,
          [{ path: 'items', message: `At most ${outcome.limit} items in the whole batch.` }],
        );
    }
  });

  router.post('/:batchId/commit', async (req, res) => {
    const { tenant, batch: found } = await ownStoredBatch(ctx, res, req.params.batchId, 'submit batches');
    if (found.state === 'open' && found.items === 0) {
      throw new ApiError(
        'conflict',
        `Batch ${found.batchId} has no items yet; append at least one part before committing.`,
      );
    }
    // Frozen first (no part can follow), then checked and started; a retried commit starts it if need be.
    const batch = found.started ? found : await ctx.batchItems.commit(found.batchId);
    if (!batch) throw ApiError.notFound(`Batch ${found.batchId}`);
    if (!batch.started) {
      const verdict = await startCommitted(ctx, batch, (start) => withTenantSync(ctx, tenant, start));
      if (!verdict.accepted) throw shedError(ctx, verdict);
      ctx.metrics.submissions.inc({ priority: batch.priority }, batch.items);
    }
    res
      .location(link(batch.batchId))
      .status(202)
      .json({ batchId: batch.batchId, total: batch.items, links: { self: link(batch.batchId) } });
  });
}
