import express, { Router, type Request, type Response } from 'express';
import { ApiError } from '../../contract/errors';
import { SIGNATURE_HEADER, verifySignature } from '../events/signature';
import type { EventEnvelope } from '../../contract/triggers';
import type { ApiContext } from '../context';
import {
  acceptEvent,
  eventLink,
  eventView,
  outcomeOf,
  retryAfterOf,
  runsForEvent,
} from '../intake/event-intake';
import { CloudEventSchema, EventIdSchema, EventListQuerySchema } from '../intake/event-schemas';
import { parseOr400 } from '../intake/validation';
import { authenticate, tenantOf } from '../middleware/auth';
import { BODY_LIMIT } from '../middleware/json-body';
import type { EventRecord } from '../../stores/events/event-store';

const JSON_TYPES = /^application\/(cloudevents\+)?json\s*(;|$)/i;

const unauthorized = (why: string) =>
  new ApiError(
    'unauthorized',
    `The webhook signature was not accepted (${why}); see docs/api.md, "Signed webhooks".`,
  );

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new ApiError('invalid_request', 'The body is not valid JSON.');
  }
}

/** The signed-webhook path: tenant from `?tenant=`, secret by (tenant, the event's source), HMAC over t.rawBody. */
async function verifiedTenant(ctx: ApiContext, req: Request, raw: Buffer, body: unknown): Promise<string> {
  const tenant = typeof req.query.tenant === 'string' ? req.query.tenant : req.get('fairway-tenant');
  const source =
    typeof body === 'object' && body !== null ? (body as { source?: unknown }).source : undefined;
  if (!tenant || typeof source !== 'string') {
    throw unauthorized('a signed delivery names its tenant in ?tenant= and its source in the body');
  }
  const secret = (await ctx.store.tenants.get(tenant))
    ? await ctx.store.events.secretFor(tenant, source)
    : undefined;
  // Unknown tenant or source: the same answer as a wrong signature, so neither can be probed.
  const verdict = verifySignature(
    req.get(SIGNATURE_HEADER),
    raw,
    secret === undefined ? [] : [secret],
    Math.floor(ctx.now() / 1000),
  );
  if (!verdict.ok) throw unauthorized(verdict.reason.replaceAll('_', ' '));
  return tenant;
}

function answer(res: Response, status: number, event: EventRecord): void {
  const retryAfter = retryAfterOf(event);
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  res.location(eventLink(event.eventId)).status(status).json(eventView(event));
}

/**
 * `POST /v1/events`, mounted before the bearer-only middleware: it takes a tenant key or a signed webhook,
 * and it needs the raw body (the signature covers the exact bytes).
 */
export function eventIngressRouter(ctx: ApiContext, adminToken: string): Router {
  const router = Router();
  const bearer = authenticate(ctx.store, adminToken);
  router.post('/', express.raw({ type: () => true, limit: BODY_LIMIT }), async (req, res) => {
    const contentType = req.get('content-type');
    if (contentType !== undefined && !JSON_TYPES.test(contentType)) {
      throw new ApiError(
        'unsupported_media_type',
        'Send the event as application/json or application/cloudevents+json (structured mode).',
      );
    }
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let tenant: string;
    let body: unknown;
    if (req.get('authorization') !== undefined) {
      // The bearer check is async (the key is looked up in the store): its rejection must reach us.
      await new Promise<void>((resolve, reject) => {
        const done = (err?: unknown) => (err ? reject(err as Error) : resolve());
        Promise.resolve(bearer(req, res, done) as unknown).catch(done);
      });
      tenant = tenantOf(res, 'send events').tenant;
      body = parseJson(raw);
    } else if (req.get(SIGNATURE_HEADER) !== undefined) {
      body = parseJson(raw);
      tenant = await verifiedTenant(ctx, req, raw, body);
    } else {
      throw new ApiError(
        'unauthorized',
        `Send your API key as "Authorization: Bearer <key>", or sign the delivery with a ${SIGNATURE_HEADER} header.`,
      );
    }
    const parsed = parseOr400(CloudEventSchema, body);
    const envelope: EventEnvelope = { ...parsed, data: parsed.data ?? null };
    const { status, event } = await acceptEvent(ctx, tenant, envelope);
    answer(res, status, event);
  });
  return router;
}

/** `GET /v1/events`, `GET /v1/events/:id`, `POST /v1/events/:id/replay` (tenant keys). */
export function eventsRouter(ctx: ApiContext): Router {
  const router = Router();

  const owned = async (res: Response, eventId: string): Promise<EventRecord> => {
    const tenant = tenantOf(res, 'read events').tenant;
    const event = EventIdSchema.safeParse(eventId).success
      ? await ctx.store.events.get(tenant, eventId)
      : undefined;
    if (!event) throw ApiError.notFound(`Event ${eventId}`);
    return event;
  };

  router.get('/', async (req, res) => {
    const tenant = tenantOf(res, 'read events').tenant;
    const query = parseOr400(EventListQuerySchema, req.query);
    const events = await ctx.store.events.list(tenant, ctx.now() + 1, query.limit);
    const items = events.map(eventView).filter((e) => !query.outcome || e.outcome === query.outcome);
    res.json({ items });
  });

  router.get('/:eventId', async (req, res) => {
    answer(res, 200, await owned(res, req.params.eventId));
  });

  router.post('/:eventId/replay', async (req, res) => {
    const event = await owned(res, req.params.eventId);
    const applied = new Set(event.runs.map((r) => r.trigger));
    const triggers = await ctx.store.events.listTriggers(event.tenant);
    const added = runsForEvent(triggers, event.tenant, event.envelope, applied);
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
