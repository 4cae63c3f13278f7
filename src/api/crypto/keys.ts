import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh tenant API key: `fw_` and 32 random bytes in base64url. Shown once; only its hash is kept. */
export function generateApiKey(): string {
  return `fw_${randomBytes(32).toString('base64url')}`;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The stored form of an API key. */
export const hashApiKey = sha256Hex;

/** Constant-time string equality (compares digests, so lengths do not leak either). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

export function randomHex(chars: number): string {
  return randomBytes(Math.ceil(chars / 2))
    .toString('hex')
    .slice(0, chars);
}
