import { createHash, createHmac, randomBytes } from 'node:crypto';

/** The prefix of a Standard Webhooks secret; the rest is the key in base64. */
export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks libraries read it. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks headers of one attempt: the event's id (the same on every attempt), the
 * attempt's time in unix seconds, and `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the
 * secret's key.
 */
export function signedHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${mac}`,
  };
}

/**
 * An event's id, derived from what it is about (`parts`, e.g. the type, the run and its execution), so
 * the same event seen again has the same id: `msg_` and 26 characters of a SHA-256.
 */
export function eventIdOf(...parts: string[]): string {
  return `msg_${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 26)}`;
}
