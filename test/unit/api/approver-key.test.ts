import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/api/crypto/keys';
import { bearer, synthetic, useHarness, type Harness } from './harness';

const triage = (incident: string) => ({ agent: 'triage', input: { incident } });

async function atGate(h: Harness, key: string): Promise<string> {
  const res = await h.submit(key, triage('db down'));
  expect(res.status).toBe(202);
  const runId = res.body.runId as string;
  h.fleet.tick();
  h.fleet.awaitApproval(runId, 0, {
    proposal: { action: 'restart db' },
    openedAt: new Date(h.clock.now).toISOString(),
    timeoutSeconds: 600,
    onTimeout: 'reject',
  });
  return runId;
}

async function approverKey(h: Harness, tenant: string): Promise<string> {
  const res = await request(h.app).post(`/v1/admin/tenants/${tenant}/approver-key`).set(h.admin());
  expect(res.status).toBe(201);
  expect(res.body).toEqual({ tenant, approverKey: expect.stringMatching(/^fw_/) });
  return res.body.approverKey as string;
}

describe('approver keys: POST /v1/admin/tenants/:id/approver-key', () => {
  const h = useHarness({ tenants: ['acme', 'other'] });

  it('decides its tenant’s gates, recorded as approver:<tenant>#<12 hex>, and reads runs and approvals', async () => {
    const runId = await atGate(h, h.keys.acme!);
    const key = await approverKey(h, 'acme');
    const listed = await request(h.app).get('/v1/approvals').set(bearer(key)).expect(200);
    expect(listed.body.items.map((i: { runId: string }) => i.runId)).toEqual([runId]);
    await request(h.app).get(`/v1/runs/${runId}`).set(bearer(key)).expect(200);
    await request(h.app).get(`/v1/runs/${runId}/steps`).set(bearer(key)).expect(200);
    const runs = await request(h.app).get('/v1/runs?tenant=other').set(bearer(key)).expect(200);
    expect(runs.body.items.every((r: { tenant: string }) => r.tenant === 'acme')).toBe(true);
    const ok = await request(h.app).post(`/v1/runs/${runId}/approve`).set(bearer(key)).send({ note: 'go' });
    expect(ok.status).toBe(200);
    const by = `approver:acme#${sha256Hex(key).slice(0, 12)}`;
    expect(ok.body).toMatchObject({ runId, decision: 'approved', by });
    expect(h.fleet.decisions).toEqual([expect.objectContaining({ runId, decision: 'approve', by })]);
    const tenantRecord = await request(h.app).get('/v1/admin/tenants/acme').set(h.admin()).expect(200);
    expect(tenantRecord.body).toMatchObject({ approverKey: true });
    expect(JSON.stringify(tenantRecord.body)).not.toContain(key);
  });

  it('cannot submit, cancel or change anything, nor reach another tenant’s gates', async () => {
    const key = await approverKey(h, 'acme');
    const runId = await atGate(h, h.keys.acme!);
    const theirs = await atGate(h, h.keys.other!);
    const refused = [
      await h.submit(key, synthetic()),
      await request(h.app).post(`/v1/runs/${runId}/cancel`).set(bearer(key)),
      await request(h.app)
        .post('/v1/batches')
        .set(bearer(key))
        .send({ agent: 'synthetic', items: [{}] }),
      await request(h.app)
        .post('/v1/events')
        .set(bearer(key))
        .send({ specversion: '1.0', id: 'e1', source: 's', type: 't', data: {} }),
      await request(h.app).put('/v1/triggers/t1').set(bearer(key)).send({}),
      await request(h.app).get('/v1/triggers').set(bearer(key)),
      await request(h.app).post('/v1/webhook-secrets').set(bearer(key)).send({ source: 's' }),
      await request(h.app).get('/v1/tenants/me').set(bearer(key)),
      await request(h.app).get('/v1/admin/tenants').set(bearer(key)),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        error: { code: 'forbidden', message: expect.stringMatching(/approver key/) },
      });
    }
    expect(await h.fleet.getRun(runId)).toMatchObject({ status: 'awaiting_approval' });
    expect((await request(h.app).post(`/v1/runs/${theirs}/approve`).set(bearer(key))).status).toBe(404);
  });

  it('once set, the tenant’s ordinary key may no longer decide gates; the admin still may', async () => {
    const runId = await atGate(h, h.keys.acme!);
    // Before an approver key exists, the tenant key decides.
    const early = await atGate(h, h.keys.acme!);
    await request(h.app).post(`/v1/runs/${early}/reject`).set(bearer(h.keys.acme!)).expect(200);
    await approverKey(h, 'acme');
    for (const d of ['approve', 'reject']) {
      const res = await request(h.app).post(`/v1/runs/${runId}/${d}`).set(bearer(h.keys.acme!));
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        error: { code: 'forbidden', message: expect.stringMatching(/approver key/) },
      });
    }
    // Other tenants are unaffected; the admin decides.
    const theirs = await atGate(h, h.keys.other!);
    await request(h.app).post(`/v1/runs/${theirs}/approve`).set(bearer(h.keys.other!)).expect(200);
    await request(h.app).post(`/v1/runs/${runId}/approve`).set(h.admin()).expect(200);
  });

  it('a new approver key replaces the old one; a disabled tenant’s approver key is refused', async () => {
    const first = await approverKey(h, 'acme');
    const second = await approverKey(h, 'acme');
    expect((await request(h.app).get('/v1/approvals').set(bearer(first))).status).toBe(401);
    await request(h.app).get('/v1/approvals').set(bearer(second)).expect(200);
    await request(h.app).post('/v1/admin/tenants/acme/disable').set(h.admin()).expect(200);
    const off = await request(h.app).get('/v1/approvals').set(bearer(second));
    expect(off.status).toBe(403);
    expect(off.body).toMatchObject({ error: { code: 'tenant_disabled' } });
    expect((await request(h.app).post('/v1/admin/tenants/nobody/approver-key').set(h.admin())).status).toBe(
      404,
    );
    expect(
      (await request(h.app).post('/v1/admin/tenants/acme/approver-key').set(bearer(h.keys.acme!))).status,
    ).toBe(403);
  });
});

describe('tenant delete: DELETE /v1/admin/tenants/:id', () => {
  const h = useHarness({ tenants: ['acme', 'other'] });

  it('refuses an enabled tenant and one with active runs (409 naming what blocks), then deletes it all', async () => {
    const key = h.keys.acme!;
    await request(h.app).post('/v1/webhook-secrets').set(bearer(key)).send({ source: 'shop' }).expect(201);
    await request(h.app)
      .put('/v1/triggers/t1')
      .set(bearer(key))
      .send({ eventType: 'order.created', agent: 'synthetic', input: { steps: 1 } })
      .expect(201);
    const run = (await h.submit(key).expect(202)).body as { runId: string };
    await approverKey(h, 'acme');
    expect(await h.store.events.listTriggers('acme')).toHaveLength(1);
    expect(await h.store.events.listSecrets('acme')).toHaveLength(1);

    const enabled = await request(h.app).delete('/v1/admin/tenants/acme').set(h.admin());
    expect(enabled.status).toBe(409);
    expect(enabled.body).toMatchObject({
      error: { code: 'conflict', message: expect.stringMatching(/disable it first/) },
    });
    await request(h.app).post('/v1/admin/tenants/acme/disable').set(h.admin()).expect(200);
    const busy = await request(h.app).delete('/v1/admin/tenants/acme').set(h.admin());
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({
      error: {
        code: 'conflict',
        message: expect.stringMatching(/1 queued/),
        details: { queued: 1, inFlight: 0 },
      },
    });
    await request(h.app).post(`/v1/runs/${run.runId}/cancel`).set(h.admin()).expect(202);
    h.fleet.tick();

    expect((await request(h.app).delete('/v1/admin/tenants/acme').set(bearer(h.keys.other!))).status).toBe(
      403,
    );
    await request(h.app).delete('/v1/admin/tenants/acme').set(h.admin()).expect(204);
    expect(await h.store.tenants.get('acme')).toBeUndefined();
    expect(await h.store.events.listSecrets('acme')).toEqual([]);
    expect(await h.store.events.listTriggers('acme')).toEqual([]);
    expect((await request(h.app).get('/v1/runs').set(bearer(key))).status).toBe(401);
    expect((await request(h.app).delete('/v1/admin/tenants/acme').set(h.admin())).status).toBe(404);
    // Other tenants keep everything.
    await h.submit(h.keys.other!).expect(202);
    // The id is not created again while its cancelled run is still listed (test/unit/api/tenant-recreate.test.ts
    // creates an id again once nothing of it is left).
    const again = await request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send({});
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: { code: 'conflict', details: { runsRemain: true } } });
  });
});
