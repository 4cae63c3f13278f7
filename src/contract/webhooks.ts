/** Webhooks out on the wire (docs/webhooks.md): the event types and what the routes answer. */
export const WEBHOOK_EVENT_TYPES = [
  'run.completed',
  'run.failed',
  'run.awaiting_approval',
  'batch.completed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** An endpoint as `GET /v1/webhooks` lists it (never its secret). */
export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string;
  createdAt: string;
}

/** `POST /v1/webhooks`'s answer: the signing secret, shown this once. */
export interface WebhookCreated extends WebhookView {
  secret: string;
}

export interface WebhookAttemptView {
  n: number;
  at: string;
  /** The HTTP status answered; null when none came (refused, timed out). */
  status: number | null;
  answer: string;
  error: string | null;
  durationMs: number;
}

/** One delivery of `GET /v1/webhooks/:id/deliveries`, with every attempt in order. */
export interface WebhookDeliveryView {
  /** The webhook-id header: the same on every attempt. */
  eventId: string;
  type: WebhookEventType;
  state: 'pending' | 'delivered' | 'failed';
  createdAt: string;
  nextAttemptAt: string | null;
  attempts: WebhookAttemptView[];
}
