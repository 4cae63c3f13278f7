import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentEffectRequest, AgentEffectResult } from '../contract/activity-types';
import type { EffectStore } from '../stores/effects/effect-store';

/** What a user's effect function is called with besides its arguments. */
export interface EffectContext {
  /** `<runId>:<name>`: the effect's idempotency key, the same on every attempt. */
  key: string;
  runId: string;
  tenant: string;
  agent: string;
  /**
   * True when an earlier attempt began this effect and did not record its result (its worker died
   * or the function threw): it may have acted. Use `key` to make the outside act idempotent.
   */
  redelivery: boolean;
  /**
   * Aborts when this attempt is cancelled or timed out (the effect's start-to-close timeout, its
   * worker shutting down): stop acting then, as a later attempt may run the effect again.
   */
  signal: AbortSignal;
}

/** A user's effect: its arguments in, a JSON result out (what `ctx.effect` returns as `result`). */
export type EffectFunction = (
  args: Record<string, unknown>,
  ctx: EffectContext,
) => Promise<unknown> | unknown;

/**
 * The `applyAgentEffect` activity over the worker's effect functions: the effect store claims the
 * key, the function runs, and its result is recorded with the delivery; a key whose delivery was
 * recorded is never run again (any attempt, any worker, after any crash) and answers the first
 * delivery's result. An unknown name fails for good.
 */
export function agentEffectActivity(
  effects: Pick<EffectStore, 'apply' | 'markDelivered'>,
  functions: Readonly<Record<string, EffectFunction>>,
  cancellation: () => AbortSignal = () => Context.current().cancellationSignal,
): (req: AgentEffectRequest) => Promise<AgentEffectResult> {
  return async (req) => {
    const fn = Object.hasOwn(functions, req.name) ? functions[req.name] : undefined;
    if (!fn)
      throw ApplicationFailure.create({
        type: 'UnknownEffect',
        message: `No effect function "${req.name}" on this worker (agent ${req.agent}).`,
        nonRetryable: true,
      });
    const state = await effects.apply(req.key, { runId: req.runId, agent: req.agent, effect: req.name });
    if (state.delivered) return { applied: false, ...resultOf(state.result) };
    const returned = await fn(req.args, {
      key: req.key,
      runId: req.runId,
      tenant: req.tenant,
      agent: req.agent,
      redelivery: !state.applied,
      signal: cancellation(),
    });
    // The function has acted: its delivery is recorded before anything else can throw, so no later
    // attempt runs it again. The first recorded delivery stands for every later attempt; only one
    // attempt's answer reaches the run (Temporal completes an activity once).
    const serialised = serialise(returned);
    await effects.markDelivered(req.key, serialised.text);
    if (serialised.error !== undefined)
      throw ApplicationFailure.create({
        type: 'EffectResultUnserialisable',
        message:
          `Effect "${req.name}" acted (recorded as delivered, it will not run again) but returned a value ` +
          `that is not JSON (${serialised.error}): return plain JSON data.`,
        nonRetryable: true,
      });
    return { applied: true, ...resultOf(serialised.text) };
  };
}

/** The function's return value as JSON text, or why it is not JSON (a BigInt, a cycle, a throwing toJSON). */
function serialise(value: unknown): { text: string | undefined; error?: string } {
  try {
    return { text: value === undefined ? undefined : JSON.stringify(value) };
  } catch (err) {
    return { text: undefined, error: err instanceof Error ? err.message : String(err) };
  }
}

const resultOf = (text: string | undefined): { result?: unknown } =>
  text === undefined ? {} : { result: JSON.parse(text) as unknown };
