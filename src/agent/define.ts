import type { z } from 'zod';
import type { ModelCompletion, ModelRequest } from '../contract/chat-model';

/**
 * The agent-authoring API: what a platform team writes in its own repository to put an agent under
 * Fairway. Sandbox-safe (zod and types only): an agents module is bundled into the worker's workflow
 * code and imported by the API for its input schema and estimate. Tool and effect implementations do
 * I/O, so they live in the worker's Node code (`startWorker({ tools, effects })`), never here.
 */

/** What a human decided at a gate. */
export interface GateDecision {
  decision: 'approve' | 'reject';
  note?: string;
  /** Who decided: the API key id or admin token name the decision came with; `timeout` when nobody did. */
  by: string;
  /** When the decision was recorded (ISO 8601). */
  at: string;
  /** True when the gate's timeout decided (`decision` is then its `onTimeout`). */
  timedOut: boolean;
}

/** A human gate: what is to be approved, and what happens when nobody decides in time. */
export interface GateOptions {
  /** What the approver sees (the run's view and GET /v1/approvals show it). JSON. */
  proposal: unknown;
  /** Seconds a human may take (default: the agent's `gate.timeoutSeconds`, else GATE_TIMEOUT_SECONDS). */
  timeoutSeconds?: number;
  /** What the gate decides when the timeout passes (default: the agent's `gate.onTimeout`, else reject). */
  onTimeout?: 'approve' | 'reject';
}

/** What an agent's code can do inside its run; every call goes through the fleet's admission, governor and ledger. */
export interface AgentContext {
  readonly runId: string;
  readonly tenant: string;
  /** One model call: reserved at its worst case (prompt counted by a tokenizer, plus `maxTokens`), charged what the provider reports. */
  model(request: ModelRequest): Promise<ModelCompletion>;
  /** A fixed-size metered model call of `tokens` (load tests and simulations); returns the tokens charged. */
  step(tokens: number, opts?: { minMs?: number; fail?: boolean }): Promise<number>;
  /** Calls a declared tool through its own identity; an undeclared tool is refused and fails the run. */
  tool<T extends Record<string, unknown> = Record<string, unknown>>(
    name: string,
    args: Record<string, unknown>,
    opts?: { key?: string },
  ): Promise<T>;
  /** A human gate: the run gives its slot back while it waits. */
  gate(opts: GateOptions): Promise<GateDecision>;
  /**
   * One idempotent effect keyed by run and `name`: the worker's effect function of that name (declared
   * in `effects`) runs with `args`, delivered once across crashes. Returns whether this call applied it
   * (false: an earlier attempt already had). Without a worker function of that name, the fleet's own
   * once-only record is written (the built-in effect).
   */
  effect(name: string, args?: Record<string, unknown>): Promise<{ applied: boolean; result?: unknown }>;
}

/** What a gate may decide when its timeout passes. */
export const GATE_TIMEOUT_OUTCOMES = ['approve', 'reject', 'escalate'] as const;

export interface AgentGatePolicy {
  timeoutSeconds: number;
  onTimeout: (typeof GATE_TIMEOUT_OUTCOMES)[number];
}

export interface AgentSpec<S extends z.ZodType = z.ZodType, R = unknown> {
  /** Unique in the fleet: [a-z][a-z0-9-]{0,62}. */
  name: string;
  description?: string;
  /** The input's schema: the API validates with it (400 with the field's path) and lists it as JSON Schema. */
  input: S;
  /**
   * The model its `ctx.model` calls use when they name none (one of the fleet's MODELS). Its runs are
   * admitted by that model's pool (`MODELS.*.pool`); an agent naming none is in the default pool.
   */
  model?: string;
  /** Tokens a run of this input is expected to use: what admission weighs and the budget reserves first. */
  estimate: number | ((input: z.output<S>) => number);
  /** Tools the agent may call; any other is refused. */
  tools?: readonly string[];
  /** Effects the agent may apply (names of the worker's effect functions). */
  effects?: readonly string[];
  /** The agent's gate policy, when it has a gate. */
  gate?: AgentGatePolicy;
  run(ctx: AgentContext, input: z.output<S>): Promise<R>;
}

export interface Agent<S extends z.ZodType = z.ZodType, R = unknown> extends AgentSpec<S, R> {
  readonly kind: 'fairway.agent';
}

/** The input type of an agent (what a client sends, before defaults). */
export type AgentInput<A> = A extends Agent<infer S, unknown> ? z.input<S> : never;
/** The result type of an agent's run. */
export type AgentResult<A> = A extends Agent<z.ZodType, infer R> ? Awaited<R> : never;

const NAME = /^[a-z][a-z0-9-]{0,62}$/;

/** Declares an agent. Throws at once on a malformed declaration. */
export function defineAgent<S extends z.ZodType, R>(spec: AgentSpec<S, R>): Agent<S, R> {
  if (!NAME.test(spec.name)) throw new TypeError(`Agent name "${spec.name}" must match ${String(NAME)}.`);
  if (typeof spec.run !== 'function')
    throw new TypeError(`Agent "${spec.name}" needs a run(ctx, input) function.`);
  if (spec.model !== undefined && (typeof spec.model !== 'string' || spec.model === ''))
    throw new TypeError(`Agent "${spec.name}": model must name one of the fleet's MODELS.`);
  if (typeof spec.estimate === 'number' && !(Number.isFinite(spec.estimate) && spec.estimate > 0))
    throw new TypeError(`Agent "${spec.name}": estimate must be a positive number or a function.`);
  return Object.freeze({ ...spec, kind: 'fairway.agent' as const });
}

/** True for a value defineAgent returned. */
export function isAgent(value: unknown): value is Agent {
  return (
    typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'fairway.agent'
  );
}

/** The agents a module exports (every export that defineAgent made), by name; throws on a duplicate name. */
export function agentsOf(mod: Record<string, unknown>): Map<string, Agent> {
  const found = new Map<string, Agent>();
  for (const value of Object.values(mod)) {
    if (!isAgent(value)) continue;
    const seen = found.get(value.name);
    if (seen && seen !== value) throw new TypeError(`Two agents are called "${value.name}".`);
    found.set(value.name, value);
  }
  return found;
}

/** The agent's estimate for a parsed input: a positive integer. */
export function estimateOf(agent: Agent, input: unknown): number {
  const raw = typeof agent.estimate === 'number' ? agent.estimate : agent.estimate(input);
  if (!Number.isFinite(raw) || raw <= 0)
    throw new RangeError(`Agent "${agent.name}" estimated ${raw} tokens.`);
  return Math.ceil(raw);
}

/** The task queue an agent's runs are served on: only workers that loaded that agent poll it. */
export function agentTaskQueue(baseTaskQueue: string, agent: string): string {
  return `${baseTaskQueue}.agent.${agent}`;
}
