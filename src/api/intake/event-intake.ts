import { tryEstimate } from '../agents/catalog';
import type { AgentCatalog } from '../agents/catalog';
import { ApiError } from '../../contract/errors';
import { renderFairnessKey, renderInput, triggerMatches, type EventEnvelope } from '../../contract/triggers';
import type { ApiContext } from '../context';
import type { RunCaps } from '../../config';
import { runCapIssues } from './run-caps';
import { canonicalHash } from '../crypto/canonical-json';
import type { EventRecord, NewEventRun, TriggerEntry } from '../../stores/events/event-store';
import type { EventOutcome } from './event-schemas';
import { newRunId, runLink } from './run-intake';
import { chargeSubmissions, rateLimit } from './shed';

/**
 * An event's key in the store: its identity is (tenant, source, id), as CloudEvents makes `id` unique
 * per source. The id comes first so the events of one id can be found without their source.
 */
export const EVENT_KEY_SEPARATOR = '\u001f';
export const eventKey = (event: Pick<EventEnvelope, 'id' | 'source'>) =>
  `${event.id}${EVENT_KEY_SEPARATOR}${event.source}`;

/** An event's address: its id, and its source as `?source=`. */
export const eventLink = (event: Pick<EventEnvelope, 'id' | 'source'>, suffix = '') =>
  `/v1/events/${encodeURIComponent(event.id)}${suffix}?source=${encodeURIComponent(event.source)}`;

/**
 * The runs the tenant's triggers make of `event`, skipping triggers in `except` (already applied).
 * Each gets a new random run id (`newRunId`), kept in the event's row: retries and replays find it
 * there, and an event id reused after its retention names new runs, never a closed one Temporal
 * still holds (its start would be refused as a duplicate). A run is held to the per-run caps as one
 * sent to `POST /v1/runs` is, and to the larger of the trigger's estimate and the agent's own.
 */
export function runsForEvent(
  agents: AgentCatalog,
  caps: RunCaps,
  triggers: readonly TriggerEntry[],
  tenant: string,
  event: EventEnvelope,
  except: ReadonlySet<string> = new Set(),
): NewEventRun[] {
  const runs: NewEventRun[] = [];
  for (const { name, spec } of triggers) {
    if (except.has(name) || !triggerMatches(spec, event)) continue;
    const agent = agents.get(spec.agent);
    const rendered = renderInput(spec.input, event);
    const parsed = agent?.input.safeParse(rendered);
    // The agent's own estimate may fail for this input: the run is refused, the event still lands.
    const estimate = agent && parsed?.success ? tryEstimate(agent, parsed.data) : undefined;
    const estimatedTokens =
      typeof estimate === 'number' ? Math.max(spec.estimatedTokens ?? 0, estimate) : spec.estimatedTokens;
    const overCaps =
      parsed?.success && estimatedTokens !== undefined
        ? runCapIssues(caps, parsed.data, estimatedTokens, 'input', 'estimatedTokens')
        : [];
    const key = renderFairnessKey(spec.fairnessKey, event);
    const base = {
      trigger: name,
      runId: newRunId(tenant),
      agent: spec.agent,
      priority: spec.priority,
      ...('key' in key && key.key !== undefined ? { fairnessKey: key.key } : {}),
    };
    const badKey = 'error' in key ? key.error : undefined;
    if (!agent || !parsed?.success || typeof estimate === 'object' || overCaps.length > 0 || badKey) {
      const why = !agent
        ? `there is no agent called "${spec.agent}"`
        : typeof estimate === 'object'
          ? estimate.why
          : overCaps.length > 0
            ? overCaps.map((i) => i.message.replace(/\.$/, '')).join('; ')
            : parsed?.success
              ? badKey
              : parsed?.error?.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
      runs.push({
        ...base,
        input: rendered ?? null,
        estimatedTokens: estimatedTokens ?? 1,
        status: 'invalid_input',
        refusal: {
          code: 'invalid_input',
          message: `The trigger's input is not valid: ${why}.`,
          retryAfterSeconds: 0,
        },
      });
      continue;
    }
    runs.push({
      ...base,
      input: parsed.data,
      estimatedTokens: estimatedTokens as number,
      status: 'pending',
    });
  }
  return runs;
}

export function outcomeOf(event: EventRecord): EventOutcome {
  const { runs } = event;
  if (runs.length === 0) return 'no_match';
  if (event.state === 'pending') return runs.some((r) => r.status === 'refused') ? 'retrying' : 'pending';
  if (runs.every((r) => r.status === 'started')) return 'started';
  if (runs.some((r) => r.status === 'refused')) return 'refused';
  if (runs.some((r) => r.status === 'pending')) return 'pending';
  return runs.some((r) => r.status === 'started') ? 'started' : 'invalid_input';
}

export function eventView(event: EventRecord) {
  return {
    eventId: event.envelope.id,
    type: event.envelope.type,
    source: event.envelope.source,
    receivedAt: new Date(event.receivedAt).toISOString(),
    outcome: outcomeOf(event),
    attempts: event.attempts,
    nextAttemptAt: event.state === 'pending' ? new Date(event.nextAttemptAt).toISOString() : null,
    replays: event.replays,
    runs: event.runs.map((r) => ({
      trigger: r.trigger,
      runId: r.runId,
      agent: r.agent,
      priority: r.priority,
      fairnessKey: r.fairnessKey ?? null,
      status: r.status,
      refusal: r.refusal,
      links: { run: runLink(r.runId) },
    })),
    links: { self: eventLink(event.envelope), replay: eventLink(event.envelope, '/replay') },
  };
}

/** The largest Retry-After among the event's refused runs, when there is one. */
export function retryAfterOf(event: EventRecord): number | undefined {
  const secs = event.runs.filter((r) => r.status === 'refused').map((r) => r.refusal?.retryAfterSeconds ?? 1);
  return secs.length > 0 ? Math.max(1, ...secs) : undefined;
}

export interface EventAnswer {
  status: 200 | 202;
  event: EventRecord;
}

/**
 * Records the event durably with the runs its triggers decide (the 2xx promise rests on this row), then
 * hands it to the dispatcher. The same id again within the retention: 200 with what it started; with
 * another body: 422.
 */
export async function acceptEvent(
  ctx: ApiContext,
  tenant: string,
  envelope: EventEnvelope,
): Promise<EventAnswer> {
  const bodyHash = canonicalHash({
    type: envelope.type,
    source: envelope.source,
    data: envelope.data ?? null,
  });
  const key = eventKey(envelope);
  // A new event is new work: one submission unit, or one per run its triggers start. A tenant out of
  // submissions is refused before anything is recorded; the units of an event let in are charged once
  // the store knows it is new (a resend is charged only its request).
  await rateLimit(ctx, tenant, 1, 'peek');
  let units = 0;
  const result = await ctx.store.events.record(
    { tenant, eventId: key, bodyHash, envelope, receivedAt: ctx.now() },
    (triggers) => {
      const runs = runsForEvent(ctx.agents, ctx.runCaps, triggers, tenant, envelope);
      units = Math.max(1, runs.filter((r) => r.status === 'pending').length);
      return runs;
    },
  );
  if (result.created) await chargeSubmissions(ctx, tenant, units);
  if (!result.created) {
    if (result.event.bodyHash !== bodyHash) {
      throw new ApiError(
        'idempotency_conflict',
        'An event with this source and id and another type or data was already received; give a new event a new id.',
        { eventId: envelope.id },
      );
    }
    return { status: 200, event: result.event };
  }
  if (result.event.state === 'pending') ctx.events.kick(tenant, key);
  return { status: 202, event: result.event };
}
