import type {
  WebhookCreated,
  WebhookDeliveryView,
  WebhookEventType,
  WebhookView,
} from '../contract/webhooks';
import type { Transport } from './transport';

export type {
  WebhookAttemptView,
  WebhookCreated,
  WebhookDeliveryView,
  WebhookEventType,
  WebhookView,
} from '../contract/webhooks';

/** The tenant's webhook endpoints (docs/webhooks.md): run and batch events, signed, at least once. */
export interface Webhooks {
  /** Registers an endpoint; the answer's `secret` is shown only this once. */
  create(spec: { url: string; events: WebhookEventType[]; description?: string }): Promise<WebhookCreated>;
  list(): Promise<{ items: WebhookView[] }>;
  get(id: string): Promise<WebhookView>;
  delete(id: string): Promise<void>;
  /** Its deliveries, newest first, each with every attempt. */
  deliveries(id: string, opts?: { limit?: number }): Promise<{ items: WebhookDeliveryView[] }>;
}

const path = (id: string) => `/v1/webhooks/${encodeURIComponent(id)}`;

export function webhooksApi(http: Transport): Webhooks {
  return {
    create: (spec) => http.request('POST', '/v1/webhooks', { body: spec }),
    list: () => http.request('GET', '/v1/webhooks'),
    get: (id) => http.request('GET', path(id)),
    delete: (id) => http.request('DELETE', path(id)),
    deliveries: (id, opts = {}) =>
      http.request('GET', `${path(id)}/deliveries${opts.limit ? `?limit=${opts.limit}` : ''}`),
  };
}
