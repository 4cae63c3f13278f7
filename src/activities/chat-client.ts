import { ApplicationFailure } from '@temporalio/common';
import type { ModelCompletion, ModelDialect, ModelRequest } from '../contract/chat-model';
import { callHeaders, exchange } from './model-client';
import type { Transport } from './model-client';
import { ANTHROPIC_VERSION, anthropicCompletion, anthropicRequest } from './provider/anthropic-wire';
import { openAiCompletion, openAiRequest } from './provider/openai-wire';
import { storedCallFields } from './provider/call-key';
import { promptBound } from './provider/tokenizer';
import type { ModelCallSample } from './observations';

/** One model a worker can call: the name agents use, its dialect, where it lives and its key. */
export interface ModelEndpoint {
  name: string;
  dialect: ModelDialect;
  /** `http://host:port` (the simulator) or a provider's base URL, with or without `/v1`. */
  baseUrl: string;
  apiKey?: string | undefined;
  /** The model's name at the provider (default: `name`). */
  providerModel?: string | undefined;
  /** The model pool its calls' samples are reported in; absent: the default pool. */
  pool?: string | undefined;
}

export interface ChatClientOptions {
  endpoints: readonly ModelEndpoint[];
  /** The model of a request that names none. */
  defaultModel: string;
  fetchImpl?: typeof fetch;
  onObservation: (sample: ModelCallSample) => void;
  now?: () => number;
  /** The longest a throttled call waits for one Retry-After, ms; default 60 s. */
  maxPauseMs?: number;
  /** Receives provider error answers (redacted); the run's failure carries a short form. */
  log?: Transport['log'];
  /** Traces each call (a client span, its `traceparent` sent to the provider); absent: untraced. */
  tracer?: Transport['tracer'];
  /** OpenAI-dialect calls go with `store: true` and their call id in `metadata` (usage lookup by id). */
  storeCalls?: boolean;
  /** The longest a call refused for its key waits before the run calls again (`keyRetry.maxMs`). */
  keyRetry?: Transport['keyRetry'];
}

export interface ChatCall {
  tenant?: string | undefined;
  runId: string;
  /** The call's index in the run: with the run id, its call key (the same on every retry). */
  step: number;
  /** The call's durable id (its call intent's key), when it is recorded. */
  callId?: string | undefined;
  request: ModelRequest;
  /** The prompt's bound in the model's dialect when the caller counted it already (it is costly). */
  promptTokens?: number;
  signal?: AbortSignal;
  /** The client gives up after this many ms (`clientTimeoutMs` of the activity's timeout); absent: never. */
  timeoutMs?: number | undefined;
}

/** `ApplicationFailure` type of a request naming a model the worker does not know (not retried). */
export const UNKNOWN_MODEL = 'ModelUnknown';

export interface ChatClient {
  /** The endpoint serving `model` (the default when absent); throws {@link UNKNOWN_MODEL}. */
  endpoint(model: string | undefined): ModelEndpoint;
  /** One model call, in the endpoint's dialect; failures as `createModelClient`'s `complete`. */
  chat(call: ChatCall): Promise<{ completion: ModelCompletion; latencyMs: number }>;
}

/** The model client for agents' own calls: OpenAI chat completions or Anthropic Messages, per model. */
export function createChatClient(opts: ChatClientOptions): ChatClient {
  const byName = new Map(opts.endpoints.map((e) => [e.name, e]));
  const transport: Transport = {
    fetchImpl: opts.fetchImpl ?? globalThis.fetch,
    now: opts.now ?? Date.now,
    maxPauseMs: opts.maxPauseMs ?? 60_000,
    onObservation: opts.onObservation,
    log: opts.log,
    tracer: opts.tracer,
    keyRetry: opts.keyRetry,
  };
  // Each endpoint's samples carry its pool: the scheduler paces each pool on its own calls only.
  const transports = new Map<string, Transport>();
  const transportOf = (e: ModelEndpoint): Transport => {
    if (e.pool === undefined) return transport;
    let t = transports.get(e.pool);
    if (!t) {
      const pool = e.pool;
      t = { ...transport, onObservation: (sample) => opts.onObservation({ ...sample, pool }) };
      transports.set(pool, t);
    }
    return t;
  };
  const endpoint = (model: string | undefined): ModelEndpoint => {
    const name = model ?? opts.defaultModel;
    const e = byName.get(name);
    if (e) return e;
    throw ApplicationFailure.create({
      type: UNKNOWN_MODEL,
      nonRetryable: true,
      message: `no model "${name}" is configured (MODELS names ${[...byName.keys()].join(', ') || 'none'})`,
    });
  };
  return {
    endpoint,
    async chat({ tenant, runId, step, callId, request, promptTokens, signal, timeoutMs }) {
      const e = endpoint(request.model);
      const base = e.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
      const model = e.providerModel ?? e.name;
      const anthropic = e.dialect === 'anthropic';
      const auth: Record<string, string> = anthropic
        ? { 'anthropic-version': ANTHROPIC_VERSION, ...(e.apiKey ? { 'x-api-key': e.apiKey } : {}) }
        : e.apiKey
          ? { authorization: `Bearer ${e.apiKey}` }
          : {};
      const body = anthropic
        ? anthropicRequest(request, model, tenant)
        : { ...openAiRequest(request, model, tenant), ...(opts.storeCalls ? storedCallFields(callId) : {}) };
      const read = anthropic ? anthropicCompletion : openAiCompletion;
      const { result, latencyMs } = await exchange(transportOf(e), {
        url: `${base}/v1/${anthropic ? 'messages' : 'chat/completions'}`,
        headers: callHeaders({ 'content-type': 'application/json', ...auth }, runId, step, tenant, callId),
        body: JSON.stringify(body),
        signal,
        timeoutMs,
        split: { input: promptTokens ?? promptBound(request, e.dialect), output: request.maxTokens },
        context: `run ${runId} call ${step} (${e.name})`,
        read: (payload) => {
          const completion = read(payload);
          return { result: completion, tokens: completion.usage.totalTokens };
        },
      });
      return { completion: result, latencyMs };
    },
  };
}
