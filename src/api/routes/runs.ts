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

/**
 * The gate a decision decides: the one it names, which must be the run's open gate; naming none, the
 * open gate when it is the run's first (the only one an approver could have meant). Otherwise 409,
 * and nothing changes. Undefined: the view numbers no gate (an older worker's, or one read from
 * visibility alone); the run itself then refuses a decision naming another gate.
 */
function decidedGate(view: RunView, named: number | undefined): number | undefined {
  const open = view.status === 'awaiting_approval' ? (view.gate?.gateId as number | undefined) : undefined;
  const details = { status: view.status, ...(open !== undefined ? { openGateId: open } : {}) };
  if (view.status !== 'awaiting_approval')
    throw new ApiError('conflict', `Run ${view.runId} is not awaiting approval.`, details);
  if (named !== undefined && open !== undefined && named !== open)
    throw new ApiError(
      'conflict',
      `Gate ${named} of run ${view.runId} is not open: the run waits at gate ${open}, whose proposal is in its view.`,
      details,
    );
  if (named === undefined && open !== undefined && open > 1)
    throw new ApiError(
      'conflict',
      `Run ${view.runId} has opened ${open} gates: name the one decided with \`gateId\` (the open one is ${open}).`,
      details,
    );
  return named ?? open;
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
      const gateId = decidedGate(view, body.gateId);
      const decided = {
        ...(gateId !== undefined ? { gateId } : {}),
        ...(body.note !== undefined ? { note: body.note } : {}),
        by: actorOf(res),
        at: new Date(ctx.now()).toISOString(),
      };
      if (!(await ctx.fleet.decide(view.runId, decision, decided))) {
        throw new ApiError('conflict', `Run ${view.runId} is not awaiting approval at gate ${gateId ?? 1}.`, {
          status: view.status,
          ...(gateId !== undefined ? { gateId } : {}),
        });
      }
      res.json({
        runId: view.runId,
        ...(gateId !== undefined ? { gateId } : {}),
        decision: decision === 'approve' ? 'approved' : 'rejected',
        by: decided.by,
        at: decided.at,
        links: { self: runLink(view.runId) },
      });
    });
  }

  return router;
}
