import { Router } from 'express';
import type { ApiContext } from '../context';
import { DrainRequestSchema, SchedulerPatchSchema } from '../intake/schemas';
import { parseOr400 } from '../intake/validation';

/** `/v1/admin`: the scheduler's status and settings, the drain switch, effect totals. Admin only. */
export function adminFleetRouter(ctx: ApiContext): Router {
  const router = Router();

  router.get('/scheduler', async (_req, res) => {
    res.json(await ctx.fleet.schedulerStatus());
  });

  router.patch('/scheduler', async (req, res) => {
    const patch = parseOr400(SchedulerPatchSchema, req.body);
    ctx.log.info({ patch }, 'scheduler settings changed');
    res.json(await ctx.fleet.patchScheduler(patch));
  });

  router.post('/drain', async (req, res) => {
    const { intake } = parseOr400(DrainRequestSchema, req.body ?? {});
    ctx.log.info({ intake }, 'drain requested');
    res.json(await ctx.fleet.drain(intake));
  });

  router.post('/resume', async (_req, res) => {
    ctx.log.info('resume requested');
    res.json(await ctx.fleet.resume());
  });

  router.get('/effects/summary', async (_req, res) => {
    res.json(await ctx.fleet.effectsSummary());
  });

  return router;
}
