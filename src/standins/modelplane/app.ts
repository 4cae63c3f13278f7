import express from 'express';
import type { z } from 'zod';
import type { NextFunction, Request, Response } from 'express';
import {
  sendError,
  sendInjected,
  sendInvalid,
  sendKeyRefused,
  sendSpendCap,
  sendThrottled,
} from './responses';
import { CALL_METADATA_KEY, TENANT_HEADER } from '../../activities/provider/call-key';
import { anthropicResponse, fromAnthropicRequest } from '../../activities/provider/anthropic-wire';
import { fromOpenAiRequest, openAiResponse } from '../../activities/provider/openai-wire';
import { MessagesRequestSchema, anthropicAnswers, sendAnthropicError } from './anthropic';
import { serveCall } from './call-flow';
import type { DialectAnswers } from './call-flow';
import { simulateCompletion } from './completions';
import {
  BystanderSchema,
  HeadersSchema,
  HoldSchema,
  WaitSignalSchema,
  CapacitySchema,
  ChatRequestSchema,
  DropsSchema,
  FaultSchema,
  RejectedKeySchema,
  SpendCapSchema,
  issueDetails,
} from './schemas';
import { SimulatorState } from './state';
import type { SimulatorOptions } from './state';
import { estimatePromptTokens } from '../../activities/provider/tokens';
import { operatorAllowed } from './operator-access';

/** Completion length when a request names none (OpenAI's would be "until done"; a simulator needs a number). */
const DEFAULT_MAX_TOKENS = 16;

/**
 * Models named `sim-1…` (the fixed-prompt steps' default, MODEL_NAME) are billed as those steps
 * reserve: the prompt at four characters a token plus `max_tokens`, with a fixed reply. Every other
 * model answers with {@link simulateCompletion}: a reply derived from the prompt, tool calls when
 * asked, usage counted with the tokenizer.
 */
export const isFixedLengthModel = (model: string): boolean => model.startsWith('sim-1');

/** A request body up to this size is read (long conversations are megabytes). */
const MAX_BODY = '64mb';

const summary = (error: z.ZodError): string =>
  error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');

/**
 * The model-plane simulator as an Express app (testable without listening):
 * an OpenAI-compatible chat endpoint and an Anthropic Messages endpoint under one set of token and
 * request quotas, one bill and one call log, plus
 * `/admin/*` controls for drills.
 */
export function createSimulator(opts: SimulatorOptions & { adminToken?: string }): {
  app: express.Express;
  state: SimulatorState;
} {
  const state = new SimulatorState(opts);
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: MAX_BODY }));

  /** `POST route`, an operator's switch: the body parsed by `schema` (else 400 with `invalid`), then `apply`'s answer. */
  const control = <S extends z.ZodType>(
    route: string,
    schema: S,
    invalid: string,
    apply: (body: z.output<S>) => unknown,
  ) =>
    app.post(route, (req, res) => {
      const parsed = schema.safeParse(req.body ?? {});
      if (!parsed.success) return sendInvalid(res, invalid, issueDetails(parsed.error));
      res.json(apply(parsed.data));
    });

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });

  const created = () => Math.floor(state.now() / 1000);
  /** Answers an agent's call in either dialect: the completion is a pure function of the request. */
  const serveCompletion = (
    req: Request,
    res: Response,
    request: ReturnType<typeof fromAnthropicRequest>,
    model: string,
    tenant: string,
    answers: (completion: ReturnType<typeof simulateCompletion>) => DialectAnswers,
  ) => {
    const completion = simulateCompletion(request, model);
    const split = { input: completion.usage.inputTokens, output: request.maxTokens };
    return serveCall(
      state,
      req,
      res,
      { split, billed: completion.usage.totalTokens, tenant, model },
      answers(completion),
    );
  };
  const openAiAnswers = (body: (id: string) => unknown): DialectAnswers => ({
    // The chat endpoint sends the rate-limit headers of the simulator's configured dialect.
    dialect: state.headerDialect,
    body,
    servedHeaders: (d) => ({ 'openai-processing-ms': String(d.delayMs), 'x-request-id': d.id }),
    spendCap: sendSpendCap,
    keyRefused: sendKeyRefused,
    injected: sendInjected,
    throttled: sendThrottled,
    bareThrottled: (res, message) =>
      sendError(res, 429, { code: 'rate_limit_exceeded', type: 'rate_limit_exceeded', message }),
  });

  app.post('/v1/chat/completions', async (req, res) => {
    const parsed = ChatRequestSchema.safeParse(req.body);
    if (!parsed.success)
      return sendInvalid(res, 'Invalid chat completion request.', issueDetails(parsed.error));
    const body = parsed.data;
    // The bill is split by the tenant the call names: OpenAI's `user` field, else the tenant header.
    const tenant = body.user ?? req.get(TENANT_HEADER) ?? '';
    if (isFixedLengthModel(body.model)) {
      const promptTokens = estimatePromptTokens(body.messages);
      const completionTokens = body.max_tokens ?? body.max_completion_tokens ?? DEFAULT_MAX_TOKENS;
      const total = promptTokens + completionTokens;
      const split = { input: promptTokens, output: completionTokens };
      return serveCall(
        state,
        req,
        res,
        { split, billed: total, tenant, model: body.model },
        openAiAnswers((id) => ({
          id,
          object: 'chat.completion',
          created: created(),
          model: body.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: `Simulated completion of ${completionTokens} tokens.` },
              finish_reason: 'length',
            },
          ],
          usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: total },
        })),
      );
    }
    await serveCompletion(req, res, fromOpenAiRequest(body, DEFAULT_MAX_TOKENS), body.model, tenant, (c) =>
      openAiAnswers((id) => openAiResponse(c, id, created())),
    );
  });

  // OpenAI's stored chat completions, listed by a metadata value: what was served for a call id, with usage.
  app.get('/v1/chat/completions', (req, res) => {
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    const callId = query.get(`metadata[${CALL_METADATA_KEY}]`);
    if (!callId)
      return sendInvalid(res, `List stored completions by metadata[${CALL_METADATA_KEY}].`, [
        { path: `metadata[${CALL_METADATA_KEY}]`, message: 'required' },
      ]);
    const data = state.usage.of(callId).map((c) => ({
      object: 'chat.completion',
      id: c.id,
      created: c.created,
      model: c.model,
      metadata: { [CALL_METADATA_KEY]: callId },
      usage: c.usage,
    }));
    res.json({
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: false,
    });
  });

  app.post('/v1/messages', async (req, res) => {
    const parsed = MessagesRequestSchema.safeParse(req.body);
    if (!parsed.success)
      return sendAnthropicError(
        res,
        400,
        'invalid_request_error',
        `Invalid request: ${summary(parsed.error)}`,
      );
    const body = parsed.data;
    const tenant = body.metadata?.user_id ?? req.get(TENANT_HEADER) ?? '';
    await serveCompletion(req, res, fromAnthropicRequest(body), body.model, tenant, (c) =>
      anthropicAnswers((id) => anthropicResponse(c, id.replace(/^chatcmpl-/, 'msg_'))),
    );
  });

  app.use('/admin', (req, res, next) => {
    if (operatorAllowed(req.socket.remoteAddress, req.get('authorization'), opts.adminToken)) return next();
    sendError(res, 403, {
      code: 'forbidden',
      type: 'invalid_request_error',
      message: 'The admin routes answer loopback peers, or the bearer token SIM_ADMIN_TOKEN.',
    });
  });

  app.get('/admin/stats', (_req, res) => {
    res.json(state.stats());
  });

  // First-call arrival times of the runs named by `?runId=` (repeatable), ms since epoch.
  app.get('/admin/first-calls', (req, res) => {
    const q = req.query.runId;
    const ids = (Array.isArray(q) ? q : [q]).filter((x): x is string => typeof x === 'string');
    res.json(state.firstCalls.pick(ids));
  });

  // The traceparent each call of the run `?runId=` arrived with, by call key.
  app.get('/admin/traces', (req, res) => {
    const id = req.query.runId;
    res.json(typeof id === 'string' ? state.traces.ofRun(id) : {});
  });

  control('/admin/capacity', CapacitySchema, 'Invalid capacity.', (b) => {
    state.setQuota(b);
    return { quota: state.stats().quota };
  });

  // Served calls by call key: steps served twice, runs with two calls in flight at once.
  app.get('/admin/calls', (_req, res) => {
    res.json(state.calls.summary());
  });

  app.get('/admin/bill', (_req, res) => {
    const { bill, billedAgain, cut, tokens } = state.stats();
    res.json({ tenants: bill, billedAgain, cut, total: tokens });
  });

  control('/admin/spend-cap', SpendCapSchema, 'Invalid spend-cap switch.', (b) => {
    const { enabled, tenant } = b;
    if (tenant === undefined) state.spendCap = enabled;
    else if (enabled) state.spendCapTenants.add(tenant);
    else state.spendCapTenants.delete(tenant);
    return { enabled: state.spendCap, tenants: [...state.spendCapTenants] };
  });

  control('/admin/rejected-key', RejectedKeySchema, 'Invalid rejected-key switch.', (b) => {
    state.rejectedKey = b.enabled ? b.status : null;
    return { rejectedKey: state.rejectedKey, refused: state.stats().refused };
  });
  control('/admin/faults', FaultSchema, 'Invalid fault.', (b) => {
    state.faults.push({ ...b });
    return { pending: state.faults.length };
  });

  control('/admin/drops', DropsSchema, 'Invalid drops.', (b) => {
    state.drops = b.calls > 0 ? { ...b } : null;
    return { drops: state.drops, dropped: state.stats().dropped };
  });

  control('/admin/wait-signal', WaitSignalSchema, 'Invalid wait signal.', (b) => {
    state.waitSignal = b.mode;
    return { waitSignal: state.waitSignal };
  });

  control('/admin/hold', HoldSchema, 'Invalid hold.', (b) => {
    state.holdMs = b.ms;
    return { holdMs: state.holdMs, held: state.stats().held };
  });

  control('/admin/headers', HeadersSchema, 'Invalid headers switch.', (b) => {
    state.rateLimitHeaders = b.rateLimit;
    return { rateLimitHeaders: state.rateLimitHeaders };
  });

  let stopBystander: (() => void) | null = null;
  app.post('/admin/bystander', (req, res) => {
    const parsed = BystanderSchema.safeParse(req.body ?? {});
    if (!parsed.success) return sendInvalid(res, 'Invalid bystander.', issueDetails(parsed.error));
    stopBystander?.();
    stopBystander =
      parsed.data.tpm > 0 ? state.startBystander(parsed.data.tpm, parsed.data.callTokens) : null;
    res.json({ bystander: state.stats().bystander });
  });

  app.use((_req, res) => {
    sendError(res, 404, { code: 'not_found', type: 'invalid_request_error', message: 'No such route.' });
  });

  // Express recognises an error handler by its four parameters.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 500;
    if (status >= 400 && status < 500) return sendInvalid(res, 'Malformed request body.');
    sendError(res, 500, { code: 'internal', type: 'server_error', message: 'Simulator error.' });
  });

  return { app, state };
}
