import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/api/crypto/keys';
import { bearer, useHarness, type Harness } from './harness';

const triage = (incident: string) => ({ agent: 'triage', input: { incident } });

/** Submits a triage run and brings it to its gate with `proposal`; returns its id. */
async function atGate(h: Harness, key: string, proposal: unknown): Promise<string> {
  const res = await h.submit(key, triage('db down'));
  expect(res.status).toBe(202);
  const runId = res.body.runId as string;
  h.fleet.tick();
  h.fleet.awaitApproval(runId, 0, {
    proposal,
    openedAt: new Date(h.clock.now).toISOString(),
    timeoutSeconds: 600,
    onTimeout: 'reject',
  });
  return runId;
}

describe('gates with a proposal and an approver', () => {
  const h = useHarness({ tenants: ['acme', 'other'] });
  const acme = () => bearer(h.keys.acme ?? '');

  it('GET /v1/approvals lists the waiting gates with their proposal and timeout, each tenant its own', async () => {
    const runId = await atGate(h, h.keys.acme ?? '', { action: 'restart db' });
    const theirs = await atGate(h, h.keys.other ?? '', { action: 'page' });
    const queued = await h.submit(h.keys.acme ?? '', triage('not yet'));
    const mine = await request(h.app).get('/v1/approvals').set(acme());
    expect(mine.status).toBe(200);
    const opened = new Date(h.clock.now).toISOString();
    expect(mine.body).toEqual({
      items: [
        {
          runId,
          tenant: 'acme',
          agent: 'triage',
          priority: 'standard',
          createdAt: opened,
          gateId: 1,
          proposal: { action: 'restart db' },
          openedAt: opened,
          timeout: {
            seconds: 600,
            onTimeout: 'reject',
            expiresAt: new Date(h.clock.now + 600_000).toISOString(),
          },
          links: {
            run: `/v1/runs/${runId}`,
            approve: `/v1/runs/${runId}/approve`,
            reject: `/v1/runs/${runId}/reject`,
          },
        },
      ],
      nextCursor: null,
    });
    expect(mine.body.items.map((i: { runId: string }) => i.runId)).not.toContain(queued.body.runId);
    // A tenant's ?tenant= changes nothing; the admin sees every tenant's, or one tenant's.
    const sneaky = await request(h.app).get('/v1/approvals?tenant=other').set(acme());
    expect(sneaky.body.items.map((i: { runId: string }) => i.runId)).toEqual([runId]);
    const all = await request(h.app).get('/v1/approvals').set(h.admin());
    expect(all.body.items.map((i: { runId: string }) => i.runId).sort()).toEqual([runId, theirs].sort());
    const one = await request(h.app).get('/v1/approvals?tenant=other').set(h.admin());
    expect(one.body.items.map((i: { runId: string }) => i.runId)).toEqual([theirs]);
  });

  it('pages with a signed cursor and a bounded page size', async () => {
    const ids = [await atGate(h, h.keys.acme ?? '', 1), await atGate(h, h.keys.acme ?? '', 2)];
    const first = await request(h.app).get('/v1/approvals?limit=1').set(acme());
    expect(first.body.items).toHaveLength(1);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await request(h.app)
      .get(`/v1/approvals?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`)
      .set(acme());
    expect([...first.body.items, ...second.body.items].map((i: { runId: string }) => i.runId).sort()).toEqual(
      ids.sort(),
    );
    expect(second.body.nextCursor).toBeNull();
    expect((await request(h.app).get('/v1/approvals?limit=51').set(acme())).status).toBe(400);
    const forged = await request(h.app).get('/v1/approvals?cursor=1.abc').set(acme());
    expect(forged.status).toBe(400);
  });

  it("a gate whose view has no proposal yet lists null, with its agent's declared timeout", async () => {
    const res = await h.submit(h.keys.acme ?? '', triage('old run'));
    h.fleet.tick();
    h.fleet.awaitApproval(res.body.runId);
    const list = await request(h.app).get('/v1/approvals').set(acme());
    expect(list.body.items[0]).toMatchObject({
      proposal: null,
      openedAt: null,
      timeout: { seconds: 24 * 3600, onTimeout: 'escalate', expiresAt: null },
    });
  });

  it('a decision records who decided (the key id, or admin) and when, and leaves the list', async () => {
    const runId = await atGate(h, h.keys.acme ?? '', { action: 'restart db' });
    h.clock.now += 1234;
    const at = new Date(h.clock.now).toISOString();
    const ok = await request(h.app).post(`/v1/runs/${runId}/approve`).set(acme()).send({ note: 'go' });
    expect(ok.status).toBe(200);
    const keyId = `key:acme#${sha256Hex(h.keys.acme ?? '').slice(0, 12)}`;
    expect(ok.body).toMatchObject({ runId, gateId: 1, decision: 'approved', by: keyId, at });
    expect(h.fleet.decisions).toEqual([{ runId, decision: 'approve', gateId: 1, note: 'go', by: keyId, at }]);
    expect((await request(h.app).get('/v1/approvals').set(acme())).body.items).toEqual([]);
    // The key id names the key, never the key.
    expect(keyId).not.toContain(h.keys.acme);

    const other = await atGate(h, h.keys.other ?? '', 'page');
    const byAdmin = await request(h.app).post(`/v1/runs/${other}/reject`).set(h.admin()).send({});
    expect(byAdmin.body).toMatchObject({ decision: 'rejected', by: 'admin', at });
    expect(h.fleet.decisions.at(-1)).toEqual({
      runId: other,
      decision: 'reject',
      gateId: 1,
      by: 'admin',
      at,
    });
  });
});

describe('a decision names its gate', () => {
  const h = useHarness({ tenants: ['acme'] });
  const acme = () => bearer(h.keys.acme ?? '');
  const decide = (runId: string, decision: string, body: unknown) =>
    request(h.app)
      .post(`/v1/runs/${runId}/${decision}`)
      .set(acme())
      .send(body as object);

  /** A run whose first gate was rejected and that now waits at its second. */
  async function atSecondGate(): Promise<string> {
    const runId = await atGate(h, h.keys.acme ?? '', 'first');
    expect((await decide(runId, 'reject', { gateId: 1 })).status).toBe(200);
    h.fleet.tick();
    h.fleet.awaitApproval(runId, 0, {
      proposal: 'second',
      openedAt: 'now',
      timeoutSeconds: 60,
      onTimeout: 'reject',
    });
    return runId;
  }

  it("lists the waiting gate's id, and decides it when named", async () => {
    const runId = await atSecondGate();
    const list = await request(h.app).get('/v1/approvals').set(acme());
    expect(list.body.items).toMatchObject([{ runId, gateId: 2, proposal: 'second' }]);
    const ok = await decide(runId, 'approve', { gateId: 2 });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ runId, gateId: 2, decision: 'approved' });
  });

  it("answers 409 to an earlier gate's approve, and sends nothing", async () => {
    const runId = await atSecondGate();
    const sent = h.fleet.decisions.length;
    const stale = await decide(runId, 'approve', { gateId: 1, note: 'meant for the first' });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({
      code: 'conflict',
      details: { status: 'awaiting_approval', openGateId: 2 },
    });
    expect(stale.body.error.message).toContain('gate 2');
    expect(h.fleet.decisions).toHaveLength(sent);
    expect((await h.fleet.getRun(runId))?.status).toBe('awaiting_approval');
  });

  it('answers 409 to a decision naming no gate once the run opened a second, and takes it at the first', async () => {
    const runId = await atSecondGate();
    const bare = await decide(runId, 'approve', {});
    expect(bare.status).toBe(409);
    expect(bare.body.error.message).toContain('gateId');
    const first = await atGate(h, h.keys.acme ?? '', 'only');
    expect((await decide(first, 'approve', {})).body).toMatchObject({ gateId: 1, decision: 'approved' });
  });

  it('answers 409 to a repeated decision, and 400 to a gate id that is no positive integer', async () => {
    const runId = await atGate(h, h.keys.acme ?? '', 'once');
    expect((await decide(runId, 'approve', { gateId: 1 })).status).toBe(200);
    expect((await decide(runId, 'approve', { gateId: 1 })).status).toBe(409);
    for (const gateId of [0, 1.5, '1', -2])
      expect((await decide(runId, 'approve', { gateId })).status).toBe(400);
  });
});
