import { Router, type Response } from 'express';
import { actorOf, mayAccess, principalOf, refuseUnlessMayDecide, tenantOf } from '../middleware/auth';
import type { ApiContext } from '../context';
import { ApiError } from '../../contract/errors';
import type { RunView } from '../../contract/fleet-port';
import { parseRunRequest } from '../intake/parse-requests';
import { runLink, submitRun } from '../intake/run-intake';
import { DecisionRequestSchema, RunIdSchema, RunListQuerySchema } from '../intake/schemas';
import { parseOr400 } from '../intake/validation';
import { enforceRunCaps, runCapIssues } from '../intake/run-caps';

/** The run, when it exists and the caller may see it; otherwise 404 (another tenant's run does not "exist"). */
async function ownedRun(ctx: ApiContext, res: Response, runId: string): Promise<RunView> {
  const view = RunIdSchema.safeParse(runId).success ? await ctx.fleet.getRun(runId) : null;
  if (!view || !mayAccess(res, view.tenant)) throw ApiError.notFound(`Run ${runId}`);
  return view;
}

export function runsRouter(ctx: ApiContext): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    const tenant = tenantOf(res, 'submit runs');
    const run = parseRunRequest(req.body, req.get('idempotency-key'), ctx.agents);
    enforceRunCaps(runCapIssues(ctx.runCaps, run.input, run.estimatedTokens, 'input', 'estimatedTokens'));
    const answer = await submitRun(ctx, tenant, run);
    res.location(runLink(answer.runId)).status(answer.status).json(answer.body);
  });

  router.get('/', async (req, res) => {
    const { idempotencyKey, ...query } = parseOr400(RunListQuerySchema, req.query);
    const principal = principalOf(res);
    const tenant = principal.kind === 'tenant' ? principal.tenant : query.tenant;
    const cursor = query.cursor === undefined ? undefined : ctx.cursors.verify(query.cursor);
    let runId: string | undefined;
    if (idempotencyKey !== undefined) {
      if (tenant === undefined)
        throw new ApiError('invalid_request', 'An idempotency key belongs to a tenant: name `tenant` too.');
      // A key no run claimed names no run: the list is empty.
      const claim = await ctx.store.idempotency.find(tenant, idempotencyKey);
      if (!claim) {
        res.json({ items: [], nextCursor: null });
        return;
      }
      runId = claim.runId;
    }
    const page = await ctx.fleet.listRuns({ ...query, cursor, tenant, ...(runId ? { runId } : {}) });
    res.json({ ...page, nextCursor: ctx.cursors.sign(page.nextCursor) });
  });

  router.get('/:runId', async (req, res) => {
    res.json(await ownedRun(ctx, res, req.params.runId));
  });

  router.get('/:runId/steps', async (req, res) => {
    const view = await ownedRun(ctx, res, req.params.runId);
    res.json({ runId: view.runId, items: (await ctx.fleet.runSteps(view.runId)) ?? [] });
  });

  router.post('/:runId/cancel', async (req, res) => {
    const view = await ownedRun(ctx, res, req.params.runId);
    if (!(await ctx.fleet.cancelRun(view.runId))) {
      throw new ApiError('conflict', `Run ${view.runId} has already finished; there is nothing to cancel.`, {
        status: (await ctx.fleet.getRun(view.runId))?.status ?? view.status,
      });
    }
    res.status(202).json({ runId: view.runId, cancelRequested: true, links: { self: runLink(view.runId) } });
  });

  for (const decision of ['approve', 'reject'] as const) {
    router.post(`/:runId/${decision}`, async (req, res) => {
      const body = parseOr400(DecisionRequestSchema, req.body ?? {});
      const view = await ownedRun(ctx, res, req.params.runId);
      refuseUnlessMayDecide(res);
      // The view just read answers for a run that is not awaiting approval (reading it again would
      // cost a second bounded query: a queued batch run's took 11 s in all); one that is, is checked
      // again as the decision is sent.
      const decided = {
        ...(body.note !== undefined ? { note: body.note } : {}),
        by: actorOf(res),
        at: new Date(ctx.now()).toISOString(),
      };
      if (view.status !== 'awaiting_approval' || !(await ctx.fleet.decide(view.runId, decision, decided))) {
        throw new ApiError('conflict', `Run ${view.runId} is not awaiting approval.`, {
          status: view.status,
        });
      }
      res.json({
        runId: view.runId,
        decision: decision === 'approve' ? 'approved' : 'rejected',
        by: decided.by,
        at: decided.at,
        links: { self: runLink(view.runId) },
      });
    });
  }

  return router;
}
