import { Router } from 'express';
import type { ApiContext } from '../context';
import { agentView } from '../agents/agent-view';
import { unknownAgent } from '../intake/parse-requests';

/**
 * `GET /v1/agents` and `GET /v1/agents/:name`: the agents runs may name, with their input schemas and
 * whether a worker serves them now (any key; the catalog is the fleet's, not a tenant's).
 */
export function agentsRouter(ctx: ApiContext): Router {
  const router = Router();

  router.get('/', async (_req, res) => {
    const agents = ctx.agents.list();
    const served = await Promise.all(agents.map((a) => ctx.served.served(a.name)));
    res.json({ items: agents.map((a, i) => agentView(a, served[i] ?? null)) });
  });

  router.get('/:name', async (req, res) => {
    const agent = ctx.agents.get(req.params.name);
    if (!agent) throw unknownAgent(req.params.name, ctx.agents);
    res.json(agentView(agent, await ctx.served.served(agent.name)));
  });

  return router;
}
