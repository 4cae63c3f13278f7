/** The `Fairway-Signature` header a signed delivery carries (docs/api.md, "Signed webhooks"). */
export const SIGNATURE_HEADER = 'Fairway-Signature';

const hex = (bytes: ArrayBuffer) =>
  [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`: the header value for `body` signed
 * with a webhook secret at `timestamp` (Web Crypto, so it runs in Node and in browsers alike).
 */
export async function signBody(secret: string, body: string, timestamp: number): Promise<string> {
  const enc = new TextEncoder();
  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    enc.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await globalThis.crypto.subtle.sign('HMAC', key, enc.encode(`${timestamp}.${body}`));
  return `t=${timestamp},v1=${hex(mac)}`;
}
