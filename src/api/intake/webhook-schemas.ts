import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../../contract/webhooks';

/** The longest endpoint URL accepted. */
export const MAX_WEBHOOK_URL_CHARS = 2048;

export const WebhookPostSchema = z.strictObject({
  /** Where deliveries go: http or https (WEBHOOK_TARGETS decides which addresses). */
  url: z.url({ protocol: /^https?$/ }).max(MAX_WEBHOOK_URL_CHARS),
  /** The event types it receives, at least one. */
  events: z
    .array(z.enum(WEBHOOK_EVENT_TYPES))
    .min(1)
    .max(WEBHOOK_EVENT_TYPES.length)
    .transform((types) => [...new Set(types)]),
  description: z.string().max(500).default(''),
});
export type WebhookPost = z.output<typeof WebhookPostSchema>;

export const WebhookIdSchema = z.string().regex(/^wh_[A-Za-z0-9_-]{1,64}$/, 'Not a webhook id (wh_...).');

export const DeliveryListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
});
