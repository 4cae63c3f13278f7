import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { Components } from './components';
import { commonResponses, json } from './responses';
import { PrioritySchema } from '../intake/schemas';
import * as E from '../intake/event-schemas';

/** Events, triggers and webhook secrets in the OpenAPI document (docs/api.md, "Events and triggers"). */

const EventRun = z.object({
  trigger: z.string(),
  runId: z.string(),
  agent: z.string(),
  priority: PrioritySchema,
  fairnessKey: z
    .string()
    .nullable()
    .meta({ description: "The run's fairness key; null: the tenant's default." }),
  status: z.enum(['pending', 'started', 'refused', 'invalid_input']),
  refusal: z.object({ code: z.string(), message: z.string(), retryAfterSeconds: z.number() }).nullable(),
  links: z.object({ run: z.string() }),
});

export const EventView = z.object({
  eventId: z.string(),
  type: z.string(),
  source: z.string(),
  receivedAt: z.string(),
  outcome: z.enum(E.EVENT_OUTCOMES),
  attempts: z.int(),
  nextAttemptAt: z.string().nullable(),
  replays: z.int(),
  runs: z.array(EventRun),
  links: z.object({ self: z.string(), replay: z.string() }),
});

const TriggerView = E.TriggerPutSchema.extend({
  name: z.string(),
  updatedAt: z.string(),
  links: z.object({ self: z.string() }),
});

const SIGNATURE =
  'Signed webhook instead of a key: t=<unix seconds>,v1=<hex HMAC-SHA256(secret of the event source, "<t>.<raw body>")>; ' +
  'refused beyond 300 s either way. Send ?tenant=<id> with it.';

export function registerEventPaths(registry: OpenAPIRegistry, c: Components): void {
  /** Each route also documents what every route may answer (bad query, limits, an unreachable fleet). */
  const add = (route: RouteConfig): void =>
    registry.registerPath({
      ...route,
      responses: { ...commonResponses(c.Error, route.method, route.path), ...route.responses },
    });
  const err = (description: string) => json(c.Error, description);
  const eventId = z.object({ eventId: z.string() });
  const bySource = z.object({
    source: z.string().optional().meta({
      description: 'The source that sent the event; needed when several sources sent this id.',
    }),
  });
  const name = z.object({ name: E.TriggerNameSchema });

  add({
    method: 'post',
    path: '/v1/events',
    summary: 'Send an event (tenant key, or a signed webhook)',
    security: [{ bearer: [] }, { webhookSignature: [] }],
    request: {
      query: z.object({
        tenant: z.string().optional().meta({ description: 'The tenant of a signed delivery.' }),
      }),
      headers: z.object({
        'Fairway-Signature': z.string().optional().meta({ description: SIGNATURE }),
        'Fairway-Tenant': z
          .string()
          .optional()
          .meta({ description: 'The tenant of a signed delivery, when ?tenant= is not given.' }),
      }),
      body: {
        required: true,
        content: {
          'application/json': { schema: E.CloudEventSchema },
          'application/cloudevents+json': { schema: E.CloudEventSchema },
        },
      },
    },
    responses: {
      202: json(EventView, 'Recorded durably before this answer; its runs start at least once.'),
      200: json(EventView, 'This source already sent this id: nothing new starts.'),
      400: err('invalid_request.'),
      401: err('unauthorized: no key, or the signature does not verify.'),
      403: err('forbidden: the admin token sends no events.'),
      413: err('payload_too_large.'),
      415: err('unsupported_media_type.'),
      409: err('conflict: several sources sent this id; name one with ?source=.'),
      422: err('idempotency_conflict: this source sent this id with another body.'),
      429: err('rate_limited; see Retry-After.'),
    },
  });
  add({
    method: 'get',
    path: '/v1/events',
    summary: "The tenant's latest events",
    request: { query: E.EventListQuerySchema },
    responses: {
      200: json(z.object({ items: z.array(EventView) }), 'Newest first.'),
      401: err('unauthorized.'),
    },
  });
  add({
    method: 'get',
    path: '/v1/events/{eventId}',
    summary: 'An event, its runs and outcome',
    request: { params: eventId, query: bySource },
    responses: {
      200: json(EventView, 'The event.'),
      401: err('unauthorized.'),
      404: err('not_found.'),
      409: err('conflict: several sources sent this id; name one with ?source=.'),
    },
  });
  add({
    method: 'post',
    path: '/v1/events/{eventId}/replay',
    summary: 'Retry refused runs and apply new triggers (never starts a run twice)',
    request: { params: eventId, query: bySource },
    responses: {
      202: json(EventView.extend({ replayed: z.literal(true) }), 'Dispatching again.'),
      200: json(EventView.extend({ replayed: z.literal(false) }), 'Nothing to do.'),
      401: err('unauthorized.'),
      404: err('not_found.'),
      409: err('conflict: several sources sent this id; name one with ?source=.'),
      429: err('rate_limited: the runs it adds are new work.'),
    },
  });

  add({
    method: 'put',
    path: '/v1/triggers/{name}',
    summary: 'Create or replace a trigger',
    request: {
      params: name,
      body: { required: true, content: { 'application/json': { schema: E.TriggerPutSchema } } },
    },
    responses: {
      201: json(TriggerView, 'Created.'),
      200: json(TriggerView, 'Replaced.'),
      400: err('invalid_request.'),
      401: err('unauthorized.'),
      404: err('unknown_agent.'),
      409: err('conflict: the tenant holds TRIGGERS_MAX_PER_TENANT triggers.'),
      413: err('payload_too_large: the input is over TRIGGER_INPUT_MAX_BYTES.'),
    },
  });
  add({
    method: 'get',
    path: '/v1/triggers',
    summary: "The tenant's triggers",
    responses: {
      200: json(z.object({ items: z.array(TriggerView) }), 'Triggers.'),
      401: err('unauthorized.'),
    },
  });
  add({
    method: 'get',
    path: '/v1/triggers/{name}',
    summary: 'A trigger',
    request: { params: name },
    responses: { 200: json(TriggerView, 'The trigger.'), 401: err('unauthorized.'), 404: err('not_found.') },
  });
  add({
    method: 'delete',
    path: '/v1/triggers/{name}',
    summary: 'Delete a trigger',
    request: { params: name },
    responses: { 204: { description: 'Deleted.' }, 401: err('unauthorized.'), 404: err('not_found.') },
  });

  const SecretCreated = z.object({ source: z.string(), secret: z.string(), rotated: z.boolean() });
  add({
    method: 'post',
    path: '/v1/webhook-secrets',
    summary: 'Create or rotate the webhook secret of a source (shown once)',
    request: {
      body: { required: true, content: { 'application/json': { schema: E.WebhookSecretPostSchema } } },
    },
    responses: {
      201: json(SecretCreated, 'Created.'),
      200: json(SecretCreated, 'Rotated; the old secret no longer verifies.'),
      400: err('invalid_request.'),
      401: err('unauthorized.'),
      409: err('conflict: the tenant holds WEBHOOK_SECRETS_MAX_PER_TENANT secrets.'),
    },
  });
  add({
    method: 'get',
    path: '/v1/webhook-secrets',
    summary: 'Sources with a webhook secret (never the secrets)',
    responses: {
      200: json(
        z.object({ items: z.array(z.object({ source: z.string(), createdAt: z.string() })) }),
        'Sources.',
      ),
      401: err('unauthorized.'),
    },
  });
  add({
    method: 'delete',
    path: '/v1/webhook-secrets',
    summary: "Delete a source's webhook secret",
    request: { query: z.object({ source: z.string() }) },
    responses: { 204: { description: 'Deleted.' }, 401: err('unauthorized.'), 404: err('not_found.') },
  });
}
