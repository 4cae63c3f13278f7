import type { Request, Response } from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import { CALL_ID_HEADER, CALL_KEY_HEADER, CALL_METADATA_KEY } from '../../activities/provider/call-key';
import { TRACEPARENT_HEADER } from '../../activities/provider/traced-call';
import { formatDuration } from '../../activities/provider/rate-limit-headers';
import { advertisedWaitMs } from './responses';
import type { Decision, SimulatorState } from './state';

/** How one dialect answers: its success body and headers, and its refusals. */
export interface DialectAnswers {
  dialect: 'openai' | 'anthropic';
  /** The success body for the decided call (its id is the simulator's). */
  body: (id: string) => unknown;
  /** Headers a served call carries besides the rate-limit ones (processing time, request id). */
  servedHeaders: (d: Extract<Decision, { kind: 'ok' }>) => Record<string, string>;
  spendCap: (res: Response, headers: Record<string, string>) => void;
  /** A refused key (401, 403) or a server error (500), in the dialect's error shape. */
  keyRefused: (res: Response, status: 401 | 403 | 500) => void;
  injected: (res: Response, headers: Record<string, string>) => void;
  throttled: (res: Response, waitMs: number, exhausted: string, headers: Record<string, string>) => void;
  /** A rate-limit 429 in the dialect's error shape, with exactly `message` and no headers of its own. */
  bareThrottled: (res: Response, message: string) => void;
}

/**
 * One call through the simulator, whatever its dialect: the quota decides it (its prompt and its
 * completion cap), refusals are answered in the dialect's shape, and a served call is billed
 * `billed` tokens to `tenant` when served (as a provider bills), logged by its call key, and
 * answered after its latency.
 */
export async function serveCall(
  state: SimulatorState,
  req: Request,
  res: Response,
  call: { split: { input: number; output: number }; billed: number; tenant: string; model?: string },
  answers: DialectAnswers,
): Promise<void> {
  const key = req.get(CALL_KEY_HEADER);
  // Accepted, and the connection closed before anything was served (a restart behind a load balancer).
  if (state.drop('before')) return void req.socket.destroy();
  state.retries.arrived(key, state.now());
  state.firstCalls.arrived(key, state.now());
  state.traces.arrived(key, req.get(TRACEPARENT_HEADER));
  const decision = await holdOverLimit(state, res, () =>
    state.decide(call.split, call.tenant, answers.dialect),
  );
  if (decision === undefined) return;
  if (decision.kind === 'key_refused') {
    state.answered(decision.status, 0);
    return answers.keyRefused(res, decision.status);
  }
  if (decision.kind === 'spend_cap') {
    state.answered(429, 0);
    return answers.spendCap(res, decision.headers);
  }
  if (decision.kind === 'injected') {
    state.answered(429, 0);
    return answers.injected(res, decision.headers);
  }
  if (decision.kind === 'throttled') {
    state.answered(429, 0);
    state.retries.throttled(key, state.now(), advertisedWaitMs(decision.waitMs));
    if (state.waitSignal === 'standard')
      return answers.throttled(res, decision.waitMs, decision.exhausted, decision.headers);
    return throttledElsewhere(res, state.waitSignal, decision.waitMs, decision.exhausted, answers);
  }
  state.retries.served(key);
  // Billed when served, as a provider does, whether or not the caller is still there to read it.
  state.answered(200, call.billed, call.tenant, state.calls.timesServed(key) > 0);
  state.usage.served(callIdOf(req), {
    id: decision.id,
    created: Math.floor(state.now() / 1000),
    model: call.model ?? '',
    tenant: call.tenant,
    usage: {
      prompt_tokens: call.billed - Math.min(call.billed, call.split.output),
      completion_tokens: Math.min(call.billed, call.split.output),
      total_tokens: call.billed,
    },
  });
  const served = state.calls.begin(key);
  // Served and billed, and the connection closed before the answer left.
  if (state.drop('after')) {
    state.cut(call.tenant, key, call.billed);
    served();
    return void req.socket.destroy();
  }
  const answered = state.answering(call.tenant, state.now() + decision.delayMs);
  res.once('close', () => {
    served();
    answered();
    if (!res.writableFinished) state.cut(call.tenant, key, call.billed);
  });
  await sleep(decision.delayMs);
  answered();
  res.set(decision.headers);
  res.set(answers.servedHeaders(decision));
  res.json(answers.body(decision.id));
}

/** The shortest pause between two looks at the quota for a held call, ms. */
const HOLD_POLL_MS = 25;

/**
 * Decides a call; over the limit, and while the simulator holds calls (`holdMs`), keeps it waiting
 * for its quota instead of refusing it, until the hold runs out (then the 429). Undefined: the
 * caller went away while held (nothing served, nothing billed).
 */
async function holdOverLimit(
  state: SimulatorState,
  res: Response,
  decide: () => Decision,
): Promise<Decision | undefined> {
  let decision = decide();
  if (decision.kind !== 'throttled' || state.holdMs <= 0) return decision;
  state.heldCall();
  const until = Date.now() + state.holdMs;
  let gone = false;
  res.once('close', () => (gone = true));
  while (decision.kind === 'throttled' && Date.now() < until) {
    await sleep(Math.max(HOLD_POLL_MS, Math.min(decision.waitMs, until - Date.now())));
    if (gone) return undefined;
    decision = decide();
  }
  return decision;
}

/** The caller's id for this call: a stored completion's `metadata.fairway_call`, else its call id header. */
function callIdOf(req: Request): string | undefined {
  const meta = (req.body as { metadata?: Record<string, unknown> } | undefined)?.metadata;
  const fromBody = meta?.[CALL_METADATA_KEY];
  return typeof fromBody === 'string' ? fromBody : req.get(CALL_ID_HEADER);
}

/** A rate-limit 429 whose wait is only in a vendor header, or only in the error text (see `WaitSignal`). */
function throttledElsewhere(
  res: Response,
  signal: 'vendor-header' | 'body',
  waitMs: number,
  exhausted: string,
  answers: DialectAnswers,
): void {
  const reached = `Rate limit reached for ${exhausted} per minute.`;
  if (signal === 'body')
    return answers.bareThrottled(
      res,
      `${reached} Please try again in ${formatDuration(advertisedWaitMs(waitMs))}.`,
    );
  res.set('llm_provider-retry-after', String(Math.max(1, Math.ceil(waitMs / 1000))));
  answers.bareThrottled(res, reached);
}
