import { afterEach, describe, expect, it } from 'vitest';
import { deliverEffect } from '../../../src/activities/effect-delivery';
import { startEffectSink } from '../../../src/standins/effectsink/sink';
import type { RunningSink } from '../../../src/standins/effectsink/sink';

const PAGER = 'pager-credential-0123456789abcdef';
const LOOKUP = 'lookup-credential-0123456789abcdef';

let sink: RunningSink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

const deliver = (s: RunningSink, headers: Record<string, string>) =>
  fetch(`${s.url}/deliveries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ key: 'run-1:remediation' }),
  });

describe('effect sink: tool identities', () => {
  it('accepts a tool acting with its own credential and records who acted', async () => {
    sink = await startEffectSink({ port: 0, host: '127.0.0.1', tools: { pager: PAGER, lookup: LOOKUP } });
    await deliverEffect(sink.url, 'run-1:remediation', undefined, { tool: 'pager', credential: PAGER });
    expect(sink.ledger.timesDelivered('run-1:remediation')).toBe(1);
    expect(sink.ledger.deliveredBy('run-1:remediation')).toBe('tool:pager');
  });

  it("refuses one tool acting with another's credential (403), a bad or missing one (401), an unknown tool (401)", async () => {
    sink = await startEffectSink({ port: 0, host: '127.0.0.1', tools: { pager: PAGER, lookup: LOOKUP } });
    const mismatched = await deliver(sink, { 'fairway-tool': 'pager', authorization: `Bearer ${LOOKUP}` });
    expect(mismatched.status).toBe(403);
    expect(((await mismatched.json()) as { error: { code: string } }).error.code).toBe('identity_mismatch');
    expect((await deliver(sink, { 'fairway-tool': 'pager', authorization: 'Bearer wrong' })).status).toBe(
      401,
    );
    expect((await deliver(sink, { 'fairway-tool': 'pager' })).status).toBe(401);
    expect(
      (await deliver(sink, { 'fairway-tool': 'scanner', authorization: `Bearer ${PAGER}` })).status,
    ).toBe(403);
    expect((await deliver(sink, { 'fairway-tool': 'constructor', authorization: 'Bearer x' })).status).toBe(
      401,
    );
    await expect(
      deliverEffect(sink.url, 'run-1:remediation', undefined, { tool: 'lookup', credential: PAGER }),
    ).rejects.toThrow(/403/);
    // Nothing refused was counted.
    expect(sink.ledger.summary().deliveries).toBe(0);
  });
});
