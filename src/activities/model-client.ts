import { ApplicationFailure } from '@temporalio/common';
import type { Tracer } from '@opentelemetry/api';
import { tracedCall } from './provider/traced-call';
import { ModelCallTimedOut, ProviderErrorAnswer } from './call-outcome';
import { parseRateLimitHeaders } from './provider/rate-limit-headers';
import type { ParsedRateLimit } from './provider/rate-limit-headers';
import { CALL_ID_HEADER, CALL_KEY_HEADER, TENANT_HEADER, storedCallFields } from './provider/call-key';
import { readWaitHint } from './provider/wait-hints';
import { reportUnknownFormat } from './provider/unknown-formats';
import { MODEL_KEY_REFUSED, estimateTextTokens, stepMaxTokens, stepPrompt } from '../contract/model-call';
import { BREAKER_DEFAULTS } from '../scheduler/breaker';
import type { ModelCallSample } from './observations';
import { readUsage } from './provider/usage';
import {
  AnswerTooLarge,
  MAX_ANSWER_BYTES,
  MAX_ERROR_BYTES,
  readAnswerJson,
  readBounded,
} from './provider/bounded-body';
import {
  credentialsOf,
  cutText,
  MAX_LOGGED_PROVIDER_CHARS,
  providerMessage,
  redactSecrets,
} from './provider/provider-text';

/** `ApplicationFailure` types the model client throws; retry policies and the API map on them. */
export const ModelErrorType = {
  /** 429 rate limit: retryable, after the provider's wait (`nextRetryDelay`). */
  throttled: 'ModelThrottled',
  /** 429 `insufficient_quota`: the account's spend cap; retrying cannot help. */
  spendCap: 'ModelSpendCap',
  /** Any other 4xx: the request itself is wrong; retrying cannot help. */
  rejected: 'ModelRequestRejected',
  /** 401 or 403: the key is refused; retryable, after the key breaker's probe backoff. */
  keyRefused: MODEL_KEY_REFUSED,
} as const;

/** How long a call refused for its key waits before its next attempt: doubling from `minMs`, at most `maxMs`. */
export interface KeyRetry {
  minMs: number;
  maxMs: number;
}

/** The key breaker's default backoffs (`MODEL_BREAKER_PROBE_*_SECONDS`). */
export const KEY_RETRY_DEFAULTS: KeyRetry = {
  minMs: BREAKER_DEFAULTS.probeMinMs,
  maxMs: BREAKER_DEFAULTS.probeMaxMs,
};

/** The wait before attempt `attempt + 1` of a call refused for its key; the cap when the attempt is unknown. */
export function keyRetryDelayMs(k: KeyRetry, attempt: number | undefined): number {
  if (attempt === undefined || !(attempt >= 1)) return k.maxMs;
  return Math.min(k.maxMs, k.minMs * 2 ** Math.min(30, attempt - 1));
}

export interface ModelClientOptions {
  /** The provider's base URL: `http://host:port` (the simulator) or one ending in `/v1`. */
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  fetchImpl?: typeof fetch;
  /** Receives one sample per answered call (2xx, 429, 401, 403, 5xx); aggregate it with `ObservationWindow`. */
  onObservation: (sample: ModelCallSample) => void;
  /** Wall clock for sample timestamps, ms. */
  now?: () => number;
  /** The longest a throttled step waits for one Retry-After, ms (`MODEL_MAX_PAUSE_SECONDS`); default 60 s. */
  maxPauseMs?: number;
  /** Receives provider faults (an answer whose usage is out of bounds, charged its worst case). */
  log?: { warn(obj: object, msg: string): void };
  /** Traces each call (a client span, its `traceparent` sent to the provider); absent: untraced. */
  tracer?: Tracer | undefined;
  /** Sends each call with `store: true` and its call id in `metadata`, so its usage can be looked up. */
  storeCalls?: boolean;
  /** The waits of a step refused for its key; default KEY_RETRY_DEFAULTS. */
  keyRetry?: KeyRetry;
}

export { TENANT_HEADER } from './provider/call-key';

export interface CompletionRequest {
  /** The tenant the call is for: sent as `user` (and a header) so the provider's bill can be split by tenant. */
  tenant?: string | undefined;
  runId: string;
  step: number;
  /** The call's durable id (its call intent's key), when it is recorded. */
  callId?: string | undefined;
  /** Tokens the step should spend: prompt plus completion. */
  tokens: number;
  /** Aborts the HTTP call (pass the activity's cancellation signal). */
  signal?: AbortSignal;
  /** The client gives up after this many ms (`clientTimeoutMs` of the activity's timeout); absent: never. */
  timeoutMs?: number | undefined;
  /** The activity's attempt (1 first): a refusal of the key waits longer on each. */
  attempt?: number;
}

export interface CompletionResult {
  /** Tokens the provider reports having served (`usage.total_tokens`). */
  usedTokens: number;
  latencyMs: number;
}

export interface ModelClient {
  /**
   * One chat completion. Throws plain `Error` for 5xx and network faults (retry),
   * and `ApplicationFailure` of a {@link ModelErrorType} for 429s and other 4xx.
   */
  complete(req: CompletionRequest): Promise<CompletionResult>;
}

/** A model-plane client speaking the OpenAI chat-completions protocol over `fetch`. */
export function createModelClient(opts: ModelClientOptions): ModelClient {
  const fetchImpl = opts.fetchImpl ?? globalThis.fetch;
  const now = opts.now ?? Date.now;
  const maxPauseMs = opts.maxPauseMs ?? 60_000;
  const base = opts.baseUrl.replace(/\/+$/, '');
  const url = base.endsWith('/v1') ? `${base}/chat/completions` : `${base}/v1/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;

  return {
    async complete({ tenant, runId, step, callId, tokens, signal, timeoutMs, attempt }) {
      const prompt = stepPrompt(runId, step);
      // The prompt is part of the step's tokens, so the call costs what the step was estimated at
      // (at most `stepWorstCase`, which the run reserved before it called).
      const maxTokens = stepMaxTokens(tokens, estimateTextTokens(prompt));
      const body = JSON.stringify({
        model: opts.model,
        messages: [{ role: 'user', content: prompt }],
        max_tokens: maxTokens,
        ...(tenant ? { user: tenant } : {}),
        ...(opts.storeCalls ? storedCallFields(callId) : {}),
      });
      const promptTokens = estimateTextTokens(prompt);
      const { result, latencyMs } = await exchange(
        {
          fetchImpl,
          now,
          maxPauseMs,
          onObservation: opts.onObservation,
          log: opts.log,
          tracer: opts.tracer,
          ...(opts.keyRetry ? { keyRetry: opts.keyRetry } : {}),
        },
        {
          url,
          attempt,
          headers: callHeaders(headers, runId, step, tenant, callId),
          body,
          signal,
          timeoutMs,
          split: { input: promptTokens, output: maxTokens },
          context: `run ${runId} step ${step}`,
          read: (payload, status) => {
            const raw = (payload as { usage?: { total_tokens?: unknown } } | null)?.usage?.total_tokens;
            if (typeof raw !== 'number') throw new Error(`Model plane answered ${status} without usage`);
            const usage = readUsage(raw, promptTokens + maxTokens);
            if (usage.fault !== null)
              opts.log?.warn(
                { runId, step, usage: raw, charged: usage.tokens },
                `provider fault: ${usage.fault}`,
              );
            return { result: usage.tokens, tokens: usage.tokens };
          },
        },
      );
      return { usedTokens: result, latencyMs };
    },
  };
}

/** The headers of one call: the step's call key, the call's own id, and the tenant the bill is split by. */
export function callHeaders(
  base: Record<string, string>,
  runId: string,
  step: number,
  tenant: string | undefined,
  callId?: string,
): Record<string, string> {
  const out: Record<string, string> = { ...base, [CALL_KEY_HEADER]: `${runId}:${step}` };
  if (tenant) out[TENANT_HEADER] = tenant;
  if (callId !== undefined) out[CALL_ID_HEADER] = callId;
  return out;
}

/** How a client sends: its transport, clock, longest pause and where its samples go. */
export interface Transport {
  fetchImpl: typeof fetch;
  now: () => number;
  maxPauseMs: number;
  onObservation: (sample: ModelCallSample) => void;
  /** Receives provider error answers in full (redacted, and cut at MAX_LOGGED_PROVIDER_CHARS). */
  log?: { warn(obj: object, msg: string): void } | undefined;
  /** Byte caps on a 2xx answer and on an error answer; default MAX_ANSWER_BYTES, MAX_ERROR_BYTES. */
  maxAnswerBytes?: number;
  maxErrorBytes?: number;
  /** Traces each call (`tracedCall`); absent: untraced. */
  tracer?: Tracer | undefined;
  /** The waits of a call refused for its key; default KEY_RETRY_DEFAULTS. */
  keyRetry?: KeyRetry | undefined;
}

/** One call of either dialect: where, what, and how a 2xx body reads (its result and billed tokens). */
export interface Exchange<T> {
  url: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal | undefined;
  /** The client gives up after this many ms with a {@link ModelCallTimedOut}; absent: never. */
  timeoutMs?: number | undefined;
  /** The call's prompt and completion tokens, to fold separate input and output quotas into one. */
  split: { input: number; output: number };
  /** Names the call in errors ("run r1 step 2"). */
  context: string;
  /** The activity's attempt, when it is retried by its retry policy (a key refusal waits longer on each). */
  attempt?: number | undefined;
  read: (payload: unknown, status: number) => { result: T; tokens: number };
}

/**
 * Sends one call and turns its answer into a result or a typed failure, sampling every answered
 * call (2xx, 429, 401, 403, 5xx) for the governor the same way whatever the dialect: the rate-limit headers of
 * both are read into one sample shape. Throws plain `Error` for 5xx and network faults (retry), and
 * `ApplicationFailure` of a {@link ModelErrorType} for 429s and other 4xx (401 and 403 retryable).
 */
export function exchange<T>(t: Transport, x: Exchange<T>): Promise<{ result: T; latencyMs: number }> {
  return t.tracer ? tracedCall(t.tracer, x, (headers) => send(t, { ...x, headers })) : send(t, x);
}

/**
 * How long the HTTP client waits for a call whose activity times out after `startToCloseMs`: a tenth
 * less, at most 5 s less, so the activity itself reports the cut call (and its charge) before Temporal
 * times it out. Undefined without a timeout.
 */
export function clientTimeoutMs(startToCloseMs: number | undefined): number | undefined {
  if (startToCloseMs === undefined || !(startToCloseMs > 0)) return undefined;
  return Math.max(startToCloseMs - 5_000, Math.round(startToCloseMs * 0.9));
}

async function send<T>(t: Transport, x: Exchange<T>): Promise<{ result: T; latencyMs: number }> {
  const started = performance.now();
  const deadline = x.timeoutMs === undefined ? undefined : AbortSignal.timeout(x.timeoutMs);
  const signal = deadline && x.signal ? AbortSignal.any([x.signal, deadline]) : (deadline ?? x.signal);
  /** The client's own deadline passed (not the activity's cancellation): the call may have been served. */
  const timedOut = (err: unknown): ModelCallTimedOut | undefined =>
    deadline?.aborted && !x.signal?.aborted
      ? new ModelCallTimedOut(
          `Model plane did not answer ${x.context} within ${x.timeoutMs} ms, just before its activity's timeout; it may have served the call, which is charged its worst case`,
          { cause: err },
        )
      : undefined;
  let res: Response;
  try {
    res = await t.fetchImpl(x.url, { method: 'POST', headers: x.headers, body: x.body, signal });
  } catch (err) {
    if (x.signal?.aborted) throw err;
    throw (
      timedOut(err) ??
      new Error(`Model plane unreachable at ${x.url}: ${(err as Error).message}`, { cause: err })
    );
  }
  // Relative values in the headers are measured from the call's own time, which the sample carries.
  const calledAt = t.now();
  const limits = parseRateLimitHeaders(res.headers, calledAt, x.split);
  const report = (
    throttled: boolean,
    served: number,
    spendCap = false,
    fault?: 'key' | 'server',
    latencyMs?: number,
  ): void =>
    t.onObservation({
      at: calledAt,
      throttled,
      tokens: served,
      ...(spendCap ? { spendCap } : {}),
      ...(fault ? { fault } : {}),
      ...(latencyMs !== undefined ? { latencyMs } : {}),
      ...sampleLimits(limits),
    });

  if (res.ok) {
    let payload: unknown;
    try {
      payload = await readAnswerJson(res, t.maxAnswerBytes ?? MAX_ANSWER_BYTES);
    } catch (err) {
      if (x.signal?.aborted) throw err;
      const late = timedOut(err);
      if (late) throw late;
      if (!(err instanceof AnswerTooLarge)) throw err;
      // Served and perhaps billed: a plain Error, retried and charged its worst case.
      throw new Error(`Model plane answered ${res.status} for ${x.context}: ${err.message}`, { cause: err });
    }
    const latencyMs = Math.round(performance.now() - started);
    const { result, tokens } = x.read(payload, res.status);
    report(false, tokens, false, undefined, latencyMs);
    return { result, latencyMs };
  }

  const error = await readError(res, t.maxErrorBytes ?? MAX_ERROR_BYTES, credentialsOf(x.headers));
  if (error.full !== undefined)
    t.log?.warn({ status: res.status, context: x.context, provider: error.full }, 'provider error answer');
  const context = x.context;
  // OpenAI's spend cap is a 429 `insufficient_quota`; Anthropic's a 402 `billing_error`.
  const spendCap =
    (res.status === 429 && (error.type === 'insufficient_quota' || error.code === 'insufficient_quota')) ||
    (res.status === 402 && error.type === 'billing_error');
  if (res.status === 429 || spendCap) {
    // Every wait signal of a rate-limit 429 (headers, error text, resets), not only `retry-after`.
    if (!spendCap)
      limits.retryAfterMs = readWaitHint(res.headers, error.full ?? '', calledAt, (f) =>
        reportUnknownFormat(t.log, f),
      )?.waitMs;
    report(true, 0, spendCap, spendCap ? 'key' : undefined);
    if (spendCap) {
      throw ApplicationFailure.create({
        type: ModelErrorType.spendCap,
        nonRetryable: true,
        message: `Model provider refused ${context}: the account's spend cap is reached (insufficient_quota). ${error.message}`,
      });
    }
    // Without a provider wait, the activity's retry policy backs off on its own; a wait beyond the
    // maximum pause is cut to it (a header must not park a step for a day).
    const waitMs =
      limits.retryAfterMs === undefined ? undefined : Math.min(t.maxPauseMs, limits.retryAfterMs);
    throw ApplicationFailure.create({
      type: ModelErrorType.throttled,
      nonRetryable: false,
      nextRetryDelay: waitMs === undefined ? undefined : Math.max(1, Math.ceil(waitMs)),
      message: `Model provider throttled ${context}; retry in ${waitMs ?? '?'} ms. ${error.message}`,
      details: [{ retryAfterMs: waitMs ?? null, remainingTokens: limits.remainingTokens ?? null }],
    });
  }
  if (res.status >= 500) {
    report(false, 0, false, 'server');
    throw new ProviderErrorAnswer(`Model plane answered ${res.status} for ${context}: ${error.message}`);
  }
  if (res.status === 401 || res.status === 403) {
    // The key, not the request: every call gets the same answer until an operator fixes it, so the
    // call waits (and the breaker pauses admission) rather than failing its run.
    report(false, 0, false, 'key');
    const waitMs = keyRetryDelayMs(t.keyRetry ?? KEY_RETRY_DEFAULTS, x.attempt);
    throw ApplicationFailure.create({
      type: ModelErrorType.keyRefused,
      nonRetryable: false,
      nextRetryDelay: waitMs,
      message: `Model provider refused the API key for ${context} with ${res.status}; retry in ${waitMs} ms. ${error.message}`,
    });
  }
  throw ApplicationFailure.create({
    type: ModelErrorType.rejected,
    nonRetryable: true,
    message: `Model provider rejected ${context} with ${res.status}: ${error.message}`,
  });
}

type SampleLimits = Omit<ModelCallSample, 'at' | 'throttled' | 'tokens' | 'spendCap' | 'fault'>;

function sampleLimits(l: ParsedRateLimit): SampleLimits {
  const out: SampleLimits = {};
  if (l.retryAfterMs !== undefined) out.retryAfterMs = l.retryAfterMs;
  if (l.remainingTokens !== undefined) out.remainingTokens = l.remainingTokens;
  if (l.limitTokens !== undefined) out.limitTokens = l.limitTokens;
  if (l.resetTokensMs !== undefined) out.resetTokensMs = l.resetTokensMs;
  if (l.remainingRequests !== undefined) out.remainingRequests = l.remainingRequests;
  if (l.limitRequests !== undefined) out.limitRequests = l.limitRequests;
  if (l.resetRequestsMs !== undefined) out.resetRequestsMs = l.resetRequestsMs;
  return out;
}

/**
 * A provider's error answer, read up to `maxBytes`: its type and code, its message redacted and cut
 * for the run's failure, and (`full`) the redacted text at log length for the operator.
 */
async function readError(
  res: Response,
  maxBytes: number,
  secrets: readonly string[],
): Promise<{ type?: string; code?: string; message: string; full?: string }> {
  const { text } = await readBounded(res, maxBytes).catch(() => ({ text: '' }));
  const clean = (raw: string) => providerMessage(raw, secrets);
  const full = text === '' ? undefined : cutText(redactSecrets(text, secrets), MAX_LOGGED_PROVIDER_CHARS);
  const short = (s: string | undefined) => (typeof s === 'string' ? cutText(s, 64) : undefined);
  try {
    const parsed = JSON.parse(text) as { error?: { type?: unknown; code?: unknown; message?: unknown } };
    const e = parsed.error ?? {};
    return {
      type: short(typeof e.type === 'string' ? e.type : undefined),
      code: short(typeof e.code === 'string' ? e.code : undefined),
      message: clean(typeof e.message === 'string' ? e.message : text),
      ...(full === undefined ? {} : { full }),
    };
  } catch {
    return { message: clean(text) || res.statusText, ...(full === undefined ? {} : { full }) };
  }
}
