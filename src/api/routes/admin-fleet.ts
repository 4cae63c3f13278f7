import { Router } from 'express';
import type { ApiContext } from '../context';
import { DrainRequestSchema, SchedulerPatchSchema } from '../intake/schemas';
import { parseOr400 } from '../intake/validation';

/**
 * `/v1/admin`: the scheduler's status and settings, the drain switch, effect totals. Admin only.
 *
 * A drain, resume or settings patch is written to the scheduler state store first, then sent to the
 * chain, and answered with the chain's status: a chain lost meanwhile, or later, is succeeded by one
 * that starts from the store (drained and patched alike). The status is always the chain's own (the
 * same as the Temporal CLI's `status` query). A `drain` or `resume` signal sent from the Temporal CLI
 * changes the running chain only, not the store: a chain that replaces a lost one goes back to the
 * store's state, and both reads show that. A drain meant to outlive the chain goes through the API
 * (`fairway drain`). A drain also pauses every schedule of the fleet (note `paused by drain`) and a
 * resume unpauses those; a schedule written while drained starts paused by the drain.
 */
export function adminFleetRouter(ctx: ApiContext): Router {
  const router = Router();

  router.get('/scheduler', async (_req, res) => {
    res.json(await ctx.fleet.schedulerStatus());
  });

  router.patch('/scheduler', async (req, res) => {
    const patch = parseOr400(SchedulerPatchSchema, req.body);
    ctx.log.info({ patch }, 'scheduler settings changed');
    await ctx.schedulerState.patchSettings(patch, ctx.now());
    res.json(await ctx.fleet.patchScheduler(patch));
  });

  router.post('/drain', async (req, res) => {
    const { intake } = parseOr400(DrainRequestSchema, req.body ?? {});
    ctx.log.info({ intake }, 'drain requested');
    await ctx.schedulerState.setDrain(intake, ctx.now());
    const status = await ctx.fleet.drain(intake);
    // Schedules stop firing; their pause is Temporal's own state, so it outlasts any scheduler chain.
    const schedules = await ctx.schedules.pauseForDrain();
    ctx.log.info({ schedules }, 'schedules paused by the drain');
    res.json(status);
  });

  router.post('/resume', async (_req, res) => {
    ctx.log.info('resume requested');
    await ctx.schedulerState.setDrain(null, ctx.now());
    const status = await ctx.fleet.resume();
    // Only the schedules the drain paused: a tenant's own pause stays.
    const schedules = await ctx.schedules.resumeAfterDrain();
    ctx.log.info({ schedules }, 'schedules unpaused by the resume');
    res.json(status);
  });

  router.get('/effects/summary', async (_req, res) => {
    res.json(await ctx.fleet.effectsSummary());
  });

  return router;
}
