import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  advertisedWaitMs,
  sendError,
  sendInjected,
  sendInvalid,
  sendSpendCap,
  sendThrottled,
} from './responses';
import { CALL_KEY_HEADER, TENANT_HEADER } from '../../activities/provider/call-key';
import {
  BystanderSchema,
  CapacitySchema,
  ChatRequestSchema,
  FaultSchema,
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
 * The model-plane simulator as an Express app (testable without listening):
 * an OpenAI-compatible chat endpoint under token and request quotas, plus
 * `/admin/*` controls for drills.
 */
export function createSimulator(opts: SimulatorOptions & { adminToken?: string }): {
  app: express.Express;
  state: SimulatorState;
} {
  const state = new SimulatorState(opts);
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });

  app.post('/v1/chat/completions', async (req, res) => {
    const parsed = ChatRequestSchema.safeParse(req.body);
    if (!parsed.success)
      return sendInvalid(res, 'Invalid chat completion request.', issueDetails(parsed.error));
    const body = parsed.data;
    const promptTokens = estimatePromptTokens(body.messages);
    const completionTokens = body.max_tokens ?? body.max_completion_tokens ?? DEFAULT_MAX_TOKENS;
    const total = promptTokens + completionTokens;
    // The bill is split by the tenant the call names: OpenAI's `user` field, else the tenant header.
    const tenant = body.user ?? req.get(TENANT_HEADER) ?? '';

    const key = req.get(CALL_KEY_HEADER);
    state.retries.arrived(key, state.now());
    state.firstCalls.arrived(key, state.now());
    const decision = state.decide({ input: promptTokens, output: completionTokens }, tenant);
    if (decision.kind === 'spend_cap') {
      state.answered(429, 0);
      return sendSpendCap(res, decision.headers);
    }
    if (decision.kind === 'injected') {
      state.answered(429, 0);
      return sendInjected(res, decision.headers);
    }
    if (decision.kind === 'throttled') {
      state.answered(429, 0);
      state.retries.throttled(key, state.now(), advertisedWaitMs(decision.waitMs));
      return sendThrottled(res, decision.waitMs, decision.exhausted, decision.headers);
    }
    state.retries.served(key);
    // Billed when served, as a provider does, whether or not the caller is still there to read it.
    state.answered(200, total, tenant, state.calls.timesServed(key) > 0);
    const served = state.calls.begin(key);
    res.once('close', served);
    await sleep(decision.delayMs);
    res.set(decision.headers);
    res.set('openai-processing-ms', String(decision.delayMs));
    res.set('x-request-id', decision.id);
    res.json({
      id: decision.id,
      object: 'chat.completion',
      created: Math.floor(state.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: `Simulated completion of ${completionTokens} tokens.` },
          finish_reason: 'length',
        },
      ],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: total },
    });
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

  app.post('/admin/capacity', (req, res) => {
    const parsed = CapacitySchema.safeParse(req.body ?? {});
    if (!parsed.success) return sendInvalid(res, 'Invalid capacity.', issueDetails(parsed.error));
    state.setQuota(parsed.data);
    res.json({ quota: state.stats().quota });
  });

  // Served calls by call key: steps served twice, runs with two calls in flight at once.
  app.get('/admin/calls', (_req, res) => {
    res.json(state.calls.summary());
  });

  app.get('/admin/bill', (_req, res) => {
    const { bill, billedAgain, tokens } = state.stats();
    res.json({ tenants: bill, billedAgain, total: tokens });
  });

  app.post('/admin/spend-cap', (req, res) => {
    const parsed = SpendCapSchema.safeParse(req.body ?? {});
    if (!parsed.success) return sendInvalid(res, 'Invalid spend-cap switch.', issueDetails(parsed.error));
    const { enabled, tenant } = parsed.data;
    if (tenant === undefined) state.spendCap = enabled;
    else if (enabled) state.spendCapTenants.add(tenant);
    else state.spendCapTenants.delete(tenant);
    res.json({ enabled: state.spendCap, tenants: [...state.spendCapTenants] });
  });

  app.post('/admin/faults', (req, res) => {
    const parsed = FaultSchema.safeParse(req.body ?? {});
    if (!parsed.success) return sendInvalid(res, 'Invalid fault.', issueDetails(parsed.error));
    state.faults.push({ ...parsed.data });
    res.json({ pending: state.faults.length });
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
