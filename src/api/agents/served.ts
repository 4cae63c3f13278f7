import type { Logger } from 'pino';
import type { FleetPort } from '../../contract/fleet-port';

/** How long an answer about an agent's workers is reused: GET /v1/agents asks Temporal at most this often per agent. */
export const SERVED_CACHE_MS = 5000;

/**
 * Whether a worker polls each agent's task queue, each answer kept SERVED_CACHE_MS. `null` when
 * Temporal could not be asked (the list still answers; the next read asks again).
 */
export class ServedAgents {
  private readonly cache = new Map<string, { at: number; answer: Promise<boolean | null> }>();

  constructor(
    private readonly fleet: Pick<FleetPort, 'agentServed'>,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  served(agent: string): Promise<boolean | null> {
    const now = this.now();
    const hit = this.cache.get(agent);
    if (hit && now - hit.at < SERVED_CACHE_MS) return hit.answer;
    const answer = this.fleet.agentServed(agent).catch((err: unknown) => {
      this.log.warn({ agent, err: String(err) }, "could not read the agent's task queue pollers");
      this.cache.delete(agent);
      return null;
    });
    this.cache.set(agent, { at: now, answer });
    return answer;
  }
}
