import { Router } from 'express';
import type { ApiContext } from '../context';
import type { RunView } from '../../contract/fleet-port';
import { mapLimit } from '../../util/map-limit';
import { principalOf } from '../middleware/auth';
import { ApprovalListQuerySchema } from '../intake/schemas';
import { parseOr400 } from '../intake/validation';
import { approvalView, type ApprovalView } from '../agents/approval-view';

/** Run views read at once for one page of approvals. */
const VIEW_READS = 8;

/**
 * `GET /v1/approvals`: the runs waiting at a human gate, newest first, a page at a time (a tenant key
 * sees its own; the admin token every tenant's, or one with `?tenant=`). The list comes from
 * visibility; each run's own view gives its proposal and timeout.
 */
export function approvalsRouter(ctx: ApiContext): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const query = parseOr400(ApprovalListQuerySchema, req.query);
    const principal = principalOf(res);
    const tenant = principal.kind === 'tenant' ? principal.tenant : query.tenant;
    const cursor = query.cursor === undefined ? undefined : ctx.cursors.verify(query.cursor);
    const page = await ctx.fleet.listRuns({
      status: 'awaiting_approval',
      limit: query.limit,
      ...(tenant !== undefined ? { tenant } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    const views = await mapLimit(page.items, VIEW_READS, (item) => ctx.fleet.getRun(item.runId));
    // Visibility lags the run by a moment: a run decided since it was listed is left out.
    const items: ApprovalView[] = views
      .filter((v): v is RunView => v?.status === 'awaiting_approval')
      .map((v) => approvalView(v, ctx.agents.get(v.agent)));
    res.json({ items, nextCursor: ctx.cursors.sign(page.nextCursor) });
  });

  return router;
}
