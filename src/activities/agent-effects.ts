import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { AgentEffectRequest, AgentEffectResult } from '../contract/activity-types';
import type { EffectStore } from '../stores/effects/effect-store';
import { jsonText } from '../contract/json-data';

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
   * Aborts when this attempt is cancelled, its worker shuts down, or its start-to-close timeout
   * (EFFECT_TIMEOUT_SECONDS) passes, measured here whether or not Temporal's cancellation arrives:
   * stop acting then.
   * A later attempt runs the effect only once this one has returned or its hold has lapsed
   * (HOLD_MS after the abort).
   */
  signal: AbortSignal;
}

/** A user's effect: its arguments in, a JSON result out (what `ctx.effect` returns as `result`). */
export type EffectFunction = (
  args: Record<string, unknown>,
  ctx: EffectContext,
) => Promise<unknown> | unknown;

/** How long an attempt's hold on its effect lasts without renewal (the effect's heartbeat timeout). */
export const HOLD_MS = 30_000;
/** An attempt renews its hold this often while its function runs, and a waiting one looks this often. */
export const HOLD_RENEW_MS = 5_000;

/** Which attempt this is and when it must be done: from the activity's context. */
export interface EffectAttempt {
  /** Unique per attempt (workflow run, activity, attempt number). */
  holder: string;
  /** Its start-to-close deadline, ms since epoch; null: none. */
  deadline: number | null;
  /** Aborts when Temporal cancels the attempt (a timeout seen at a heartbeat, a shutdown). */
  cancelled: AbortSignal;
}

function currentAttempt(): EffectAttempt {
  const ctx = Context.current();
  const i = ctx.info;
  return {
    holder: `${i.workflowExecution?.workflowId ?? ''}/${i.workflowExecution?.runId ?? ''}/${i.activityId}#${i.attempt}`,
    deadline:
      i.startToCloseTimeoutMs > 0 ? i.currentAttemptScheduledTimestampMs + i.startToCloseTimeoutMs : null,
    cancelled: ctx.cancellationSignal,
  };
}

/**
 * The `applyAgentEffect` activity over the worker's effect functions: the effect store claims the
 * key, the function runs, and its result is recorded with the delivery; a key whose delivery was
 * recorded is never run again (any attempt, any worker, after any crash) and answers the first
 * delivery's result. An unknown name fails for good.
 *
 * One attempt at a time: an attempt acts only while it holds the effect (`EffectStore.hold`,
 * renewed while its function runs). A later attempt waits while an earlier one still may act (its
 * worker alive, its deadline not passed) and goes on once that one returned, threw, or let its hold
 * lapse; at its deadline an attempt's signal aborts and its hold is no longer renewed.
 */
export function agentEffectActivity(
  effects: Pick<EffectStore, 'apply' | 'markDelivered' | 'delivery' | 'hold' | 'release'>,
  functions: Readonly<Record<string, EffectFunction>>,
  attempt: () => EffectAttempt = currentAttempt,
  clock: { now: () => number; sleep: (ms: number) => Promise<void> } = {
    now: Date.now,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  },
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
    const me = attempt();
    const abort = new AbortController();
    const stop = () => abort.abort(new Error('effect attempt cancelled or past its start-to-close timeout'));
    if (me.cancelled.aborted) stop();
    else me.cancelled.addEventListener('abort', stop, { once: true });
    // Waits while an earlier attempt may still act; an effect delivered meanwhile answers as delivered.
    for (;;) {
      if (abort.signal.aborted)
        throw new CancelledFailure('effect attempt cancelled while waiting for an earlier one');
      const now = clock.now();
      const hold = await effects.hold(req.key, me.holder, now + HOLD_MS, now);
      if (hold === 'held') break;
      if (hold === 'delivered')
        return { applied: false, ...resultOf((await effects.delivery(req.key)).result) };
      await clock.sleep(HOLD_RENEW_MS);
    }
    const deadline =
      me.deadline === null ? undefined : setTimeout(stop, Math.max(0, me.deadline - clock.now()));
    const renew = setInterval(() => {
      if (abort.signal.aborted) return;
      const now = clock.now();
      // Lost (this worker stalled past HOLD_MS and a later attempt took over): stop acting.
      void effects.hold(req.key, me.holder, now + HOLD_MS, now).then(
        (h) => (h === 'held' ? undefined : stop()),
        () => undefined,
      );
    }, HOLD_RENEW_MS);
    let returned: unknown;
    try {
      returned = await fn(req.args, {
        key: req.key,
        runId: req.runId,
        tenant: req.tenant,
        agent: req.agent,
        redelivery: !state.applied,
        signal: abort.signal,
      });
    } catch (err) {
      await effects.release(req.key, me.holder).catch(() => undefined);
      throw err;
    } finally {
      clearInterval(renew);
      if (deadline !== undefined) clearTimeout(deadline);
      me.cancelled.removeEventListener('abort', stop);
    }
    // The function has acted: its delivery is recorded before anything else can throw, so no later
    // attempt runs it again. The first recorded delivery stands for every later attempt; only one
    // attempt's answer reaches the run (Temporal completes an activity once).
    const serialised = jsonText(returned);
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

const resultOf = (text: string | undefined): { result?: unknown } =>
  text === undefined ? {} : { result: JSON.parse(text) as unknown };
