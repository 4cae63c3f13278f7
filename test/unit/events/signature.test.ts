import { describe, expect, it } from 'vitest';
import { parseSignatureHeader, signPayload, verifySignature } from '../../../src/api/events/signature';

const SECRET = 'whsec_test_secret';
const BODY = Buffer.from('{"id":"e1","type":"t","source":"s","data":{"a":1}}');
const NOW = 1_750_000_000;

describe('webhook signature (t=<unix>,v1=<hex HMAC-SHA256 over "t.rawBody">)', () => {
  it('accepts what signPayload makes, within the tolerance either side', () => {
    expect(verifySignature(signPayload(SECRET, BODY, NOW), BODY, [SECRET], NOW)).toEqual({ ok: true });
    expect(verifySignature(signPayload(SECRET, BODY, NOW - 300), BODY, [SECRET], NOW).ok).toBe(true);
    expect(verifySignature(signPayload(SECRET, BODY, NOW + 300), BODY, [SECRET], NOW).ok).toBe(true);
  });

  it('matches the published scheme byte for byte (an independent HMAC)', async () => {
    const { createHmac } = await import('node:crypto');
    const hex = createHmac('sha256', SECRET).update(`${NOW}.${BODY.toString()}`).digest('hex');
    expect(signPayload(SECRET, BODY, NOW)).toBe(`t=${NOW},v1=${hex}`);
  });

  it('refuses an old or future timestamp even with a correct signature', () => {
    expect(verifySignature(signPayload(SECRET, BODY, NOW - 301), BODY, [SECRET], NOW)).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(verifySignature(signPayload(SECRET, BODY, NOW + 301), BODY, [SECRET], NOW).ok).toBe(false);
  });

  it('refuses another body, another secret, and a signature moved to a fresh timestamp', () => {
    const header = signPayload(SECRET, BODY, NOW);
    const other = Buffer.from(BODY.toString().replace('"a":1', '"a":2'));
    expect(verifySignature(header, other, [SECRET], NOW)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(header, BODY, ['whsec_other'], NOW).ok).toBe(false);
    const v1 = header.split('v1=')[1];
    expect(verifySignature(`t=${NOW + 10},v1=${v1}`, BODY, [SECRET], NOW + 10).ok).toBe(false);
    expect(verifySignature(header, BODY, [], NOW).ok).toBe(false);
  });

  it('refuses missing and malformed headers', () => {
    expect(verifySignature(undefined, BODY, [SECRET], NOW)).toEqual({ ok: false, reason: 'missing' });
    for (const bad of ['v1=abc', `t=${NOW}`, 't=abc,v1=00', 'garbage', `t=${NOW},t=${NOW},v1=00`]) {
      expect(verifySignature(bad, BODY, [SECRET], NOW)).toEqual({ ok: false, reason: 'malformed' });
    }
    // a v1 that is not 64 hex digits never matches (and never throws on a length mismatch)
    expect(verifySignature(`t=${NOW},v1=abcd`, BODY, [SECRET], NOW)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('accepts any one of several v1 signatures and any one of several secrets (rotation)', () => {
    const good = signPayload('whsec_new', BODY, NOW).split('v1=')[1];
    const header = `t=${NOW},v1=${'0'.repeat(64)},v1=${good}`;
    expect(verifySignature(header, BODY, ['whsec_old', 'whsec_new'], NOW).ok).toBe(true);
    expect(parseSignatureHeader(header)?.signatures).toHaveLength(2);
  });
});
