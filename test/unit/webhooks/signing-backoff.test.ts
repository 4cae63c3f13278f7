import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { retryAfterOf, retryDelayMs, retrySchedule } from '../../../src/api/webhooks/backoff';
import { eventIdOf, newWebhookSecret, signedHeaders } from '../../../src/api/webhooks/signing';
import { isForbiddenAddress, targetProblem } from '../../../src/api/webhooks/targets';
import { DEFAULT_RETRY } from '../../../src/config';

describe('webhook signatures (Standard Webhooks)', () => {
  it('verify with the published standardwebhooks library, and sign as it signs', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ type: 'run.completed', data: { runId: 'r-1' } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = signedHeaders(secret, 'msg_abc', ts, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_abc', new Date(ts * 1000), body));
    // Another body, id or secret does not verify.
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'msg_other' })).toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('derives a stable id from what the event is about', () => {
    const a = eventIdOf('acme', 'run.completed', 'run-1', 'exec-1');
    expect(a).toMatch(/^msg_[A-Za-z0-9_-]{26}$/);
    expect(eventIdOf('acme', 'run.completed', 'run-1', 'exec-1')).toBe(a);
    expect(eventIdOf('acme', 'run.completed', 'run-1', 'exec-2')).not.toBe(a);
    expect(eventIdOf('acme', 'run.completed', 'run-1e', 'xec-1')).not.toBe(a);
  });
});

describe('webhook retry schedule', () => {
  it('doubles from the base up to the cap, and stops after the last attempt', () => {
    expect(retrySchedule(DEFAULT_RETRY)).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000]);
    expect(retrySchedule({ maxAttempts: 6, baseMs: 200, maxMs: 1_000 })).toEqual([
      200, 400, 800, 1_000, 1_000,
    ]);
    expect(retryDelayMs(1, { maxAttempts: 1, baseMs: 200, maxMs: 1_000 })).toBeNull();
  });

  it('honours a longer Retry-After, up to the cap', () => {
    const p = { maxAttempts: 5, baseMs: 1_000, maxMs: 60_000 };
    expect(retryDelayMs(1, p, 30)).toBe(30_000);
    expect(retryDelayMs(1, p, 3600)).toBe(60_000);
    expect(retryDelayMs(3, p, 1)).toBe(4_000);
    expect(retryAfterOf('12', 0)).toBe(12);
    expect(retryAfterOf(new Date(10_000).toUTCString(), 0)).toBe(10);
    expect(retryAfterOf('soon', 0)).toBeUndefined();
  });
});

describe('webhook targets', () => {
  it('takes http(s) only, without credentials', () => {
    expect(targetProblem('ftp://example.com/x', 'any')).toMatch(/http/);
    expect(targetProblem('not a url', 'any')).toMatch(/URL/);
    expect(targetProblem('https://u:p@example.com/', 'any')).toMatch(/user/);
    expect(targetProblem('https://hooks.example.com/in', 'public')).toBeUndefined();
  });

  it('under `public`, refuses loopback, private and metadata addresses; `any` allows them', () => {
    for (const u of [
      'http://127.0.0.1:9/',
      'http://localhost/',
      'http://localhost./',
      'http://a.localhost./',
      'http://10.1.2.3/',
      'http://169.254.169.254/',
      'http://[::1]/',
      'http://[::ffff:192.168.0.1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[64:ff9b::a00:1]/',
      'http://[64:ff9b:1::1]/',
      'http://[::7f00:1]/',
      'http://[fec0::1]/',
    ])
      expect(targetProblem(u, 'public'), u).toMatch(/loopback/);
    expect(targetProblem('http://127.0.0.1:9/', 'any')).toBeUndefined();
    expect(isForbiddenAddress('100.64.0.1')).toBe(true);
    expect(isForbiddenAddress('fd00::1')).toBe(true);
    expect(isForbiddenAddress('93.184.216.34')).toBe(false);
    expect(isForbiddenAddress('2606:4700::1')).toBe(false);
    expect(isForbiddenAddress('::ffff:7f00:1')).toBe(true);
    expect(isForbiddenAddress('::ffff:5db8:d822')).toBe(false);
  });

  it('under `public`, refuses the prefixes that carry an IPv4 address inside IPv6', () => {
    for (const a of [
      '2002:7f00:1::1', // 6to4 of 127.0.0.1
      '2002:a00:1::', // 6to4 of 10.0.0.1
      '2002:5db8:d822::1', // 6to4 (all of it: a relay decides where it goes)
      '::ffff:0:7f00:1', // IPv4-translated 127.0.0.1
      '::ffff:0:5db8:d822', // IPv4-translated (all of it)
      '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
      '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
      '2001::1',
    ])
      expect(isForbiddenAddress(a), a).toBe(true);
    expect(targetProblem('http://[2002:a9fe:a9fe::]/', 'public')).toMatch(/loopback/);
    expect(targetProblem('http://[2001::1]/', 'public')).toMatch(/loopback/);
    // Neighbours of those prefixes are ordinary public addresses.
    expect(isForbiddenAddress('2001:4860:4860::8888')).toBe(false);
    expect(isForbiddenAddress('2003::1')).toBe(false);
  });
});
