import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed webhooks, the scheme Stripe and GitHub use: `Fairway-Signature: t=<unix seconds>,v1=<hex>`
 * where the hex is HMAC-SHA256(secret, `${t}.${rawBody}`). The timestamp is signed with the body, so an
 * old delivery cannot be re-sent under a fresh timestamp, and a delivery older (or newer) than the
 * tolerance is refused. Several `v1=` entries are allowed (one per secret while a secret rotates).
 */
export const SIGNATURE_HEADER = 'Fairway-Signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type SignatureVerdict =
  { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'timestamp_out_of_tolerance' | 'mismatch' };

const HEX64 = /^[0-9a-f]{64}$/;

function hmacHex(secret: string, timestamp: number, rawBody: Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(rawBody).digest('hex');
}

/** The header value a sender computes for `rawBody` at `timestamp` (unix seconds). */
export function signPayload(secret: string, rawBody: Buffer | string, timestamp: number): string {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`;
}

/** `t=...,v1=...,v1=...` → the timestamp and signatures, or null when the header is not of that form. */
export function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | null {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      signatures.push(value.toLowerCase());
    } // other schemes (v0, ...) are ignored, as Stripe does
  }
  if (timestamp === undefined || signatures.length === 0) return null;
  return { timestamp, signatures };
}

/**
 * Checks a `Fairway-Signature` header against every candidate secret, in constant time per comparison.
 * `nowSeconds` is the receiver's clock in unix seconds.
 */
export function verifySignature(
  header: string | undefined,
  rawBody: Buffer,
  secrets: readonly string[],
  nowSeconds: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): SignatureVerdict {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing' };
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowSeconds - parsed.timestamp) > toleranceSeconds) {
    return { ok: false, reason: 'timestamp_out_of_tolerance' };
  }
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(hmacHex(secret, parsed.timestamp, rawBody), 'hex');
    for (const sig of parsed.signatures) {
      if (!HEX64.test(sig)) continue;
      // No early exit: every candidate is compared, so timing says nothing about which one matched.
      if (timingSafeEqual(expected, Buffer.from(sig, 'hex'))) matched = true;
    }
  }
  return matched ? { ok: true } : { ok: false, reason: 'mismatch' };
}
