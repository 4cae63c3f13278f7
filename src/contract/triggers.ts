/**
 * Triggers, the pure part: which events a trigger matches and the run input it makes of one.
 * No I/O; the store keeps triggers, the dispatcher acts on what these functions decide.
 */
import { FAIRNESS_KEY_PATTERN } from '../scheduler/limits';

export interface EventEnvelope {
  id: string;
  type: string;
  source: string;
  specversion: string;
  time?: string;
  data: unknown;
  /** Set by the door on a delivery verified by its source's webhook secret (never taken from a body). */
  signed?: boolean;
}

export type Scalar = string | number | boolean | null;

export interface TriggerSpec {
  /** Matches events whose `type` equals this exactly. */
  eventType: string;
  /**
   * The event sources the trigger accepts. Absent: any source, for events sent with the tenant's API
   * key only; a signed delivery fires only triggers that name its source here.
   */
  sources?: string[];
  /** Every entry must hold: the value at the dotted path (from the event: `data.a.b`, `source`) equals it. */
  filter: Record<string, Scalar>;
  agent: string;
  priority: 'interactive' | 'standard' | 'batch';
  /**
   * The run's input. Absent: the event's `data` as is. Otherwise a JSON template in which every string
   * that is exactly `{{path}}` is replaced by the value at that dotted path of the event.
   */
  input?: unknown;
  estimatedTokens?: number;
  /**
   * The run's fairness key: a fixed key (`"user-42"`), or `{{path}}` to take it from the event
   * (`{{data.userId}}`). Absent, or a path the event lacks (or holds null at): the tenant's default key.
   */
  fairnessKey?: string;
}

const UNSAFE = new Set(['__proto__', 'prototype', 'constructor']);

/** The value at a dotted path (`data.service.name`, `items.0`), or undefined when any step is missing. */
export function valueAt(root: unknown, path: string): unknown {
  let cur: unknown = root;
  for (const step of path.split('.')) {
    if (UNSAFE.has(step) || cur === null || typeof cur !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(cur, step)) return undefined;
    cur = (cur as Record<string, unknown>)[step];
  }
  return cur;
}

/** True when the trigger's type, its sources and every filter entry match (strict equality on scalars). */
export function triggerMatches(
  trigger: Pick<TriggerSpec, 'eventType' | 'filter' | 'sources'>,
  event: EventEnvelope,
): boolean {
  if (trigger.eventType !== event.type) return false;
  if (trigger.sources ? !trigger.sources.includes(event.source) : event.signed === true) return false;
  return Object.entries(trigger.filter).every(([path, want]) => valueAt(event, path) === want);
}

const PLACEHOLDER = /^\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}$/;

/**
 * The fairness key a trigger gives the run it makes of `event` (see `TriggerSpec.fairnessKey`):
 * `key` undefined for the tenant's default key, or `error` when the event's value is not a key (not a
 * string or number in the key form).
 */
export function renderFairnessKey(
  template: string | undefined,
  event: EventEnvelope,
): { key: string | undefined } | { error: string } {
  if (template === undefined) return { key: undefined };
  const m = PLACEHOLDER.exec(template);
  if (!m) return { key: template };
  const value = valueAt(event, m[1]!);
  if (value === undefined || value === null) return { key: undefined };
  const key = typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  if (key !== undefined && FAIRNESS_KEY_PATTERN.test(key)) return { key };
  return {
    error: `the fairness key at ${m[1]} is not 1-64 characters of letters, digits and . _ : @ | / + = -`,
  };
}

/** Renders the trigger's input template against the event (see `TriggerSpec.input`). */
export function renderInput(template: unknown, event: EventEnvelope): unknown {
  if (template === undefined) return event.data;
  if (typeof template === 'string') {
    const m = PLACEHOLDER.exec(template);
    return m ? valueAt(event, m[1]!) : template;
  }
  if (Array.isArray(template)) return template.map((t) => renderInput(t, event));
  if (template !== null && typeof template === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(template)) {
      const rendered = renderInput(v, event);
      if (rendered !== undefined) out[k] = rendered;
    }
    return out;
  }
  return template;
}
