import { estimateAt } from '../agents/catalog';
import type { FieldIssue } from '../../contract/errors';
import type { ScheduleDefinition } from '../../contract/schedules';
import type { AgentCatalog } from '../agents/catalog';
import { agentAndInput } from './parse-requests';
import { SchedulePutSchema } from './schedule-schemas';
import type { SchedulePut } from './schedule-schemas';
import { issuesToDetails } from './validation';

/**
 * Parses `PUT /v1/schedules/:name` as POST /v1/runs parses a run: the envelope (400 with field
 * paths), the agent (404 unknown_agent), its input by the agent's schema (paths like `input.steps`);
 * the estimate is never below the agent's own; a schedule fires no more often than `minIntervalSeconds`.
 */
export function parseScheduleRequest(
  body: unknown,
  agents: AgentCatalog,
  minIntervalSeconds: number,
): ScheduleDefinition {
  const issues: FieldIssue[] = [];
  const envelope = SchedulePutSchema.safeParse(body);
  if (!envelope.success) issues.push(...issuesToDetails(envelope.error.issues));
  else issues.push(...timingIssues(envelope.data, minIntervalSeconds));
  const { agent, input } = agentAndInput(body, agents, issues);
  if (!envelope.success) throw new Error('unreachable: agentAndInput() throws on every failure');
  const s = envelope.data;
  return {
    agent: agent.name,
    input,
    priority: s.priority,
    estimatedTokens: Math.max(s.estimatedTokens ?? 0, estimateAt(agent, input, 'input')),
    ...(s.fairnessKey !== undefined ? { fairnessKey: s.fairnessKey } : {}),
    timing: s.cron !== undefined ? { cron: s.cron } : { intervalSeconds: s.intervalSeconds ?? 0 },
    overlap: s.overlap,
    paused: s.paused,
  };
}

/** A cron expression's fields beyond these five carry seconds (and years): firings under a minute apart. */
const CRON_MINUTE_FIELDS = 5;

/** The rule SCHEDULE_MIN_INTERVAL_SECONDS sets: no interval below it, no seconds field unless it is below a minute. */
function timingIssues(s: SchedulePut, minIntervalSeconds: number): FieldIssue[] {
  if (s.intervalSeconds !== undefined && s.intervalSeconds < minIntervalSeconds) {
    return [
      {
        path: 'intervalSeconds',
        message: `A schedule fires at most every ${minIntervalSeconds} s here (SCHEDULE_MIN_INTERVAL_SECONDS).`,
      },
    ];
  }
  const fields = s.cron?.startsWith('@') ? 0 : (s.cron?.split(' ').length ?? 0);
  if (fields > CRON_MINUTE_FIELDS && minIntervalSeconds >= 60) {
    return [
      {
        path: 'cron',
        message: 'A cron expression here has five fields (minute hour day month weekday): no seconds field.',
      },
    ];
  }
  return [];
}
