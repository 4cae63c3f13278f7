import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '../../contract/errors';
import {
  DEFAULT_TOLERANCE_SECONDS,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  verifySignature,
} from '../events/signature';
import type { EventEnvelope } from '../../contract/triggers';
import type { ApiContext } from '../context';
import {
  acceptEvent,
  EVENT_KEY_SEPARATOR,
  eventLink,
  eventView,
  outcomeOf,
  retryAfterOf,
  runsForEvent,
} from '../intake/event-intake';
import { CloudEventSchema, EventIdSchema, EventListQuerySchema } from '../intake/event-schemas';
import { parseOr400 } from '../intake/validation';
import { chargeRequest, rateLimit } from '../intake/shed';
import { authenticate, refuseDisabled, tenantOf } from '../middleware/auth';
import { BODY_LIMIT, nonUtf8Charset, notUtf8 } from '../middleware/json-body';
import { assertJsonDepth } from '../middleware/json-depth';
import type { EventRecord } from '../../stores/events/event-store';
import type { TenantRecord } from '../../stores/tenants/tenants';

/** Where a signed delivery may name its tenant instead of `?tenant=` (documented in the OpenAPI document). */
export const WEBHOOK_TENANT_HEADER = 'Fairway-Tenant';

/** The most events one id may name, one per source, that a lookup by id considers. */
const MAX_SOURCES_PER_ID = 20;

const JSON_TYPES = /^application\/(cloudevents\+)?json\s*(;|$)/i;

const unauthorized = (why: string) =>
  new ApiError(
    'unauthorized',
    `The webhook signature was not accepted (${why}); see docs/api.md, "Signed webhooks".`,
  );

function parseJson(raw: Buffer): unknown {
  assertJsonDepth(raw);
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new ApiError('invalid_request', 'The body is not valid JSON.');
  }
}

/** A middleware run as a step of a handler: resolves when it calls next(), rejects on next(err) or a throw. */
function step(handler: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (err?: unknown) => (err ? reject(err as Error) : resolve());
    Promise.resolve(handler(req, res, done) as unknown).catch(done);
  });
}

/** What a signed delivery claims before its body is read: the tenant and the candidate secrets by source. */
interface SignedClaim {
  tenant: string;
  secrets: { source: string; secret: string }[];
  /** The tenant's record, when it exists: a disabled one is refused once the signature holds. */
  record: TenantRecord | undefined;
}

/**
 * The signed-webhook path, before the body is read: the header must be well formed and fresh, and the
 * tenant (`?tenant=`) must exist and hold webhook secrets; anything else is 401 with the body unread.
 * Unknown tenant, no secret, wrong signature: one answer, so none can be told from the others.
 */
async function signedClaim(ctx: ApiContext, req: Request): Promise<SignedClaim> {
  const tenant = typeof req.query.tenant === 'string' ? req.query.tenant : req.get(WEBHOOK_TENANT_HEADER);
  if (!tenant) throw unauthorized('a signed delivery names its tenant in ?tenant=');
  const parsed = parseSignatureHeader(req.get(SIGNATURE_HEADER) ?? '');
  if (!parsed) throw unauthorized('malformed');
  if (Math.abs(Math.floor(ctx.now() / 1000) - parsed.timestamp) > DEFAULT_TOLERANCE_SECONDS)
    throw unauthorized('timestamp out of tolerance');
  const secrets: SignedClaim['secrets'] = [];
  const record = await ctx.store.tenants.get(tenant);
  if (record) {
    // Charged before its secrets are looked up or its body read; a resent delivery is charged too.
    await chargeRequest(ctx, tenant);
    for (const { source } of await ctx.store.events.listSecrets(tenant)) {
      const secret = await ctx.store.events.secretFor(tenant, source);
      if (secret !== undefined) secrets.push({ source, secret });
    }
  }
  if (secrets.length === 0) throw unauthorized('mismatch');
  return { tenant, secrets, record };
}

/**
 * The source whose secret signed `raw` (checked over the raw bytes, before any parse), else 401. Every
 * secret of the tenant is tried, so the signature itself says which source sent the delivery.
 */
function signingSource(ctx: ApiContext, req: Request, raw: Buffer, claim: SignedClaim): string {
  const now = Math.floor(ctx.now() / 1000);
  let source: string | undefined;
  let reason = 'mismatch';
  for (const candidate of claim.secrets) {
    // No early exit: every secret is compared, so timing says nothing about which one matched.
    const verdict = verifySignature(req.get(SIGNATURE_HEADER), raw, [candidate.secret], now);
    if (verdict.ok) source ??= candidate.source;
    else reason = verdict.reason;
  }
  if (source === undefined) throw unauthorized(reason.replaceAll('_', ' '));
  return source;
}

function answer(res: Response, status: number, event: EventRecord): void {
  const retryAfter = retryAfterOf(event);
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  res.location(eventLink(event.envelope)).status(status).json(eventView(event));
}

/**
 * `POST /v1/events`, mounted before the bearer-only middleware: it takes a tenant key or a signed webhook,
 * and it needs the raw body (the signature covers the exact bytes).
 */
export function eventIngressRouter(ctx: ApiContext, adminTokens: readonly string[]): Router {
  const router = Router();
  const bearer = authenticate(ctx.store, adminTokens);
  const readRaw = express.raw({ type: () => true, limit: BODY_LIMIT });
  // The credential is checked from the headers alone, before a byte of the body is read.
  router.post('/', async (req, res) => {
    const contentType = req.get('content-type');
    if (contentType !== undefined && !JSON_TYPES.test(contentType)) {
      throw new ApiError(
        'unsupported_media_type',
        'Send the event as application/json or application/cloudevents+json (structured mode).',
      );
    }
    const charset = nonUtf8Charset(contentType);
    if (charset !== undefined) throw notUtf8(charset);
    let tenant: string;
    let claim: SignedClaim | undefined;
    if (req.get('authorization') !== undefined) {
      await step(bearer, req, res);
      tenant = tenantOf(res, 'send events').tenant;
      await chargeRequest(ctx, tenant);
    } else if (req.get(SIGNATURE_HEADER) !== undefined) {
      claim = await signedClaim(ctx, req);
      tenant = claim.tenant;
    } else {
      throw new ApiError(
        'unauthorized',
        `Send your API key as "Authorization: Bearer <key>", or sign the delivery with a ${SIGNATURE_HEADER} header.`,
      );
    }
    await step(readRaw, req, res);
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const signedBy = claim ? signingSource(ctx, req, raw, claim) : undefined;
    if (claim?.record) refuseDisabled(claim.record);
    const parsed = parseOr400(CloudEventSchema, parseJson(raw));
    // A secret speaks for its own source only.
    if (signedBy !== undefined && parsed.source !== signedBy) throw unauthorized('mismatch');
    const envelope: EventEnvelope = {
      ...parsed,
      data: parsed.data ?? null,
      ...(signedBy !== undefined ? { signed: true } : {}),
    };
    const { status, event } = await acceptEvent(ctx, tenant, envelope);
    answer(res, status, event);
  });
  return router;
}

/** `GET /v1/events`, `GET /v1/events/:id`, `POST /v1/events/:id/replay` (tenant keys). */
export function eventsRouter(ctx: ApiContext): Router {
  const router = Router();

  /**
   * The caller's event with this id: the one from `?source=`, or the only source that sent this id;
   * 404 when there is none, 409 when several sources sent it and none is named.
   */
  const owned = async (req: Request, res: Response, eventId: string): Promise<EventRecord> => {
    const tenant = tenantOf(res, 'read events').tenant;
    const source = typeof req.query.source === 'string' ? req.query.source : undefined;
    const found = EventIdSchema.safeParse(eventId).success
      ? await ctx.store.events.findById(tenant, eventId, EVENT_KEY_SEPARATOR, MAX_SOURCES_PER_ID)
      : [];
    const matching = found.filter((e) => source === undefined || e.envelope.source === source);
    if (matching.length === 0) throw ApiError.notFound(`Event ${eventId}`);
    if (matching.length > 1)
      throw new ApiError(
        'conflict',
        `Several sources sent an event with id ${eventId}; name one with ?source=.`,
        { sources: matching.map((e) => e.envelope.source).sort() },
      );
    return matching[0]!;
  };

  router.get('/', async (req, res) => {
    const tenant = tenantOf(res, 'read events').tenant;
    const query = parseOr400(EventListQuerySchema, req.query);
    const events = await ctx.store.events.list(tenant, ctx.now() + 1, query.limit);
    const items = events.map(eventView).filter((e) => !query.outcome || e.outcome === query.outcome);
    res.json({ items });
  });

  router.get('/:eventId', async (req, res) => {
    answer(res, 200, await owned(req, res, req.params.eventId));
  });

  router.post('/:eventId/replay', async (req, res) => {
    const event = await owned(req, res, req.params.eventId);
    const applied = new Set(event.runs.map((r) => r.trigger));
    const triggers = await ctx.store.events.listTriggers(event.tenant);
    const added = runsForEvent(ctx.agents, ctx.runCaps, triggers, event.tenant, event.envelope, applied);
    // The runs a replay adds are new work.
    const adding = added.filter((r) => r.status === 'pending').length;
    if (adding > 0) await rateLimit(ctx, event.tenant, adding);
    const toRetry = event.runs.some((r) => r.status === 'refused' || r.status === 'pending');
    if (added.length === 0 && !toRetry) {
      // Nothing was refused and no new trigger matches: a replay never starts a run twice.
      res.status(200).json({ ...eventView(event), replayed: false });
      return;
    }
    await ctx.store.events.reopen(event.tenant, event.eventId, added, ctx.now());
    ctx.events.kick(event.tenant, event.eventId);
    const reopened = (await ctx.store.events.get(event.tenant, event.eventId)) ?? event;
    res.status(202).json({ ...eventView(reopened), replayed: true, outcome: outcomeOf(reopened) });
  });

  return router;
}
