import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { RunStep } from '../contract/fleet-port';

type Event = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

/** The local activities' marker, as the Temporal Core SDK records it. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
/** Activities that are a run's steps, as its agent sees them; the rest (admission, leases) is the fleet's. */
const KINDS: Record<string, RunStep['kind']> = {
  modelStep: 'step',
  modelCall: 'model',
  applyEffect: 'effect',
  applyAgentEffect: 'effect',
};

const first = (p: Payloads): unknown => {
  const payload = p?.payloads?.[0];
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload);
  } catch {
    return undefined; // an encoded payload this process cannot read: shown without its details
  }
};
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const at = (e: Event): string => {
  const t = e.eventTime;
  // `seconds` is a Long or a number, as the payload was decoded: its decimal string reads either.
  const ms = t ? Number(String(t.seconds ?? 0)) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
  return new Date(ms).toISOString();
};

/** What a step's input names it: the step number, the model asked for, the effect's name. */
function nameOf(kind: RunStep['kind'], input: Record<string, unknown>, seq: number): string {
  if (kind === 'model') return String(obj(input.request).model ?? 'model call');
  if (kind === 'effect') return String(input.name ?? 'effect');
  return `step ${String(input.step ?? seq)}`;
}

/** Tokens a finished step was charged, from its result. */
function tokensOf(kind: RunStep['kind'], result: Record<string, unknown>): number | null {
  if (kind === 'step') return num(result.usedTokens);
  if (kind === 'model')
    return num(obj(obj(result.completion).usage).totalTokens) ?? num(result.reservedTokens);
  return null;
}

const settled = (kind: RunStep['kind'], result: Record<string, unknown>): RunStep['outcome'] =>
  kind === 'effect' ? (result.applied === false ? 'duplicate' : 'applied') : 'ok';

/**
 * A run's steps, model calls and effects from its history events: regular activities by their
 * scheduled, completed and failed events, local ones (short steps, the built-in effect) by their
 * markers, which carry no input (a short step is then named by its order).
 */
export function stepsFromHistory(events: readonly Event[]): RunStep[] {
  const steps: RunStep[] = [];
  const scheduled = new Map<string, { step: RunStep; kind: RunStep['kind'] }>();
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) {
      const kind = KINDS[s.activityType?.name ?? ''];
      if (!kind) continue;
      const step: RunStep = {
        kind,
        name: nameOf(kind, obj(first(s.input)), steps.filter((x) => x.kind !== 'effect').length + 1),
        tokens: null,
        outcome: 'running',
        at: at(e),
      };
      steps.push(step);
      scheduled.set(String(e.eventId), { step, kind });
      continue;
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const open = scheduled.get(String(done.scheduledEventId));
      if (!open) continue;
      const result = obj(first(done.result));
      open.step.outcome = settled(open.kind, result);
      open.step.tokens = tokensOf(open.kind, result);
      continue;
    }
    const failure =
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (failure) {
      const open = scheduled.get(String(failure.scheduledEventId));
      if (!open) continue;
      open.step.outcome = 'failed';
      const f = 'failure' in failure ? failure.failure : null;
      open.step.error = f?.cause?.message ?? f?.message ?? 'failed';
      continue;
    }
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName === LOCAL_ACTIVITY_MARKER) {
      const data = obj(first(m.details?.data));
      const kind = KINDS[String(data.activity_type ?? '')];
      if (!kind) continue;
      const result = obj(first(m.details?.result));
      steps.push({
        kind,
        name: nameOf(kind, {}, steps.filter((x) => x.kind !== 'effect').length + 1),
        tokens: m.failure ? null : tokensOf(kind, result),
        outcome: m.failure ? 'failed' : settled(kind, result),
        ...(m.failure ? { error: m.failure.cause?.message ?? m.failure.message ?? 'failed' } : {}),
        at: at(e),
      });
    }
  }
  return steps;
}
