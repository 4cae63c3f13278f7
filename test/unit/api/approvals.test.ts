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
    expect(ok.body).toMatchObject({ runId, decision: 'approved', by: keyId, at });
    expect(h.fleet.decisions).toEqual([{ runId, decision: 'approve', note: 'go', by: keyId, at }]);
    expect((await request(h.app).get('/v1/approvals').set(acme())).body.items).toEqual([]);
    // The key id names the key, never the key.
    expect(keyId).not.toContain(h.keys.acme);

    const other = await atGate(h, h.keys.other ?? '', 'page');
    const byAdmin = await request(h.app).post(`/v1/runs/${other}/reject`).set(h.admin()).send({});
    expect(byAdmin.body).toMatchObject({ decision: 'rejected', by: 'admin', at });
    expect(h.fleet.decisions.at(-1)).toEqual({ runId: other, decision: 'reject', by: 'admin', at });
  });
});
