import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../../contract/webhooks';
import { DeliveryListQuerySchema, WebhookIdSchema, WebhookPostSchema } from '../intake/webhook-schemas';
import type { Components } from './components';
import { commonResponses, errorResponses, json } from './responses';

/** Webhooks out in the OpenAPI document (docs/webhooks.md). */

const EventType = z.enum(WEBHOOK_EVENT_TYPES);

const WebhookView = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(EventType),
    description: z.string(),
    createdAt: z.string(),
  })
  .meta({ id: 'WebhookView' });

const WebhookCreated = WebhookView.extend({
  secret: z.string().describe('The signing secret (`whsec_` + base64), shown only in this answer: keep it.'),
}).meta({ id: 'WebhookCreated' });

const Attempt = z.object({
  n: z.int(),
  at: z.string(),
  status: z.int().nullable().describe('The HTTP status answered; null when none came (refused, timed out).'),
  answer: z.string().describe("The first 1,024 characters of the answer's body."),
  error: z.string().nullable(),
  durationMs: z.int(),
});

const Delivery = z
  .object({
    eventId: z.string().describe('The webhook-id header: the same on every attempt; dedupe by it.'),
    type: EventType,
    state: z.enum(['pending', 'delivered', 'failed']),
    createdAt: z.string(),
    nextAttemptAt: z.string().nullable(),
    attempts: z.array(Attempt),
  })
  .meta({ id: 'WebhookDelivery' });

const params = z.object({ id: WebhookIdSchema });

export function registerWebhookPaths(registry: OpenAPIRegistry, c: Components): void {
  const errors = (...codes: number[]) => errorResponses(c.Error, ...codes);
  const add = (route: RouteConfig): void =>
    registry.registerPath({
      ...route,
      responses: { ...commonResponses(c.Error, route.method, route.path), ...route.responses },
    });

  add({
    method: 'post',
    path: '/v1/webhooks',
    summary: 'Register a webhook endpoint for run events (tenant key)',
    description:
      'Deliveries are signed as Standard Webhooks describes (webhook-id, webhook-timestamp, webhook-signature). ' +
      'An http(s) URL only; under WEBHOOK_TARGETS=public (the default) not a loopback, private or link-local address.',
    request: {
      body: { required: true, content: { 'application/json': { schema: WebhookPostSchema } } },
    },
    responses: {
      201: json(WebhookCreated, 'Registered; the secret is shown this once.'),
      ...errors(400, 409),
    },
  });
  add({
    method: 'get',
    path: '/v1/webhooks',
    summary: "The tenant's webhook endpoints (never their secrets)",
    responses: { 200: json(z.object({ items: z.array(WebhookView) }), 'The endpoints, oldest first.') },
  });
  add({
    method: 'get',
    path: '/v1/webhooks/{id}',
    summary: 'One webhook endpoint',
    request: { params },
    responses: { 200: json(WebhookView, 'The endpoint.'), ...errors(400, 404) },
  });
  add({
    method: 'delete',
    path: '/v1/webhooks/{id}',
    summary: 'Delete a webhook endpoint and its deliveries',
    request: { params },
    responses: { 204: { description: 'Deleted.' }, ...errors(400, 404) },
  });
  add({
    method: 'get',
    path: '/v1/webhooks/{id}/deliveries',
    summary: "An endpoint's deliveries, newest first, each with its attempts",
    request: { params, query: DeliveryListQuerySchema },
    responses: { 200: json(z.object({ items: z.array(Delivery) }), 'The deliveries.'), ...errors(400, 404) },
  });
}
