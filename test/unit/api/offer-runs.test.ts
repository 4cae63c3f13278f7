import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import type { EffectStore } from '../../../src/stores/effects/effect-store';
import type { RunSpec } from '../../../src/contract/fleet-port';
import { defaultTenantSettings } from '../../../src/scheduler';
import { MemoryFleet } from './memory-fleet';
import { loadConfig } from '../../../src/config';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
const spec = (i: number, tenant = 'acme'): RunSpec => ({
  runId: `run-${tenant}-${String(i).padStart(20, '0')}`,
  tenant,
  agent: 'synthetic',
  priority: 'standard',
  input: { steps: 1 },
  estimatedTokens: 100,
  createdAt: new Date(T0).toISOString(),
});

/** The one offer sequence (start, submit, discard if refused) on the real core with simulated runs. */
describe('offerRuns', () => {
  let dir: string;
  let effects: EffectStore;
  let fleet: MemoryFleet;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'offer-'));
    effects = openSqliteEffectStore(join(dir, 'effects.sqlite'));
    fleet = new MemoryFleet(() => T0, effects);
    await fleet.upsertTenant('acme', defaultTenantSettings({ maxQueued: 2 }));
  });
  afterEach(async () => {
    await effects.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts before it submits, and a refused run is discarded: nothing is left behind', async () => {
    const out = await fleet.offerRuns([spec(1), spec(2), spec(3)]);
    expect(out.map((o) => o.state)).toEqual(['accepted', 'accepted', 'refused']);
    expect(out[2]).toMatchObject({ state: 'refused', refusal: { code: 'queue_full' } });
    expect(fleet.startRunCalls.map((s) => s.runId)).toEqual([spec(1), spec(2), spec(3)].map((s) => s.runId));
    expect(fleet.submitCalls).toHaveLength(1);
    expect(fleet.discarded).toEqual([spec(3).runId]);
    expect(fleet.run(spec(3).runId)).toBeUndefined();
    expect(fleet.status().queued.total).toBe(2);
  });

  it('keeps a refused run when told (a batch item offers itself again later)', async () => {
    const out = await fleet.offerRuns([spec(1), spec(2), spec(3)], { onRefused: 'keep' });
    expect(out[2]?.state).toBe('refused');
    expect(fleet.discarded).toEqual([]);
    expect(fleet.run(spec(3).runId)?.status).toBe('queued');
  });

  it('never offers a run that already finished', async () => {
    await fleet.offerRuns([spec(1)]);
    fleet.tick();
    fleet.complete(spec(1).runId);
    const before = fleet.submitCalls.length;
    const [again] = await fleet.offerRuns([spec(1)]);
    expect(again).toEqual({ runId: spec(1).runId, state: 'finished' });
    expect(fleet.submitCalls.length).toBe(before);
    expect(fleet.status().counters.admitted).toBe(1);
  });

  it('re-syncs a tenant the scheduler lost, once, then offers again', async () => {
    fleet.resetScheduler();
    const synced: string[] = [];
    const resync = async (tenant: string) => {
      synced.push(tenant);
      await fleet.upsertTenant(tenant, defaultTenantSettings());
    };
    const out = await fleet.offerRuns([spec(1), spec(2)], { resync });
    expect(out.map((o) => o.state)).toEqual(['accepted', 'accepted']);
    expect(synced).toEqual(['acme']);
    expect(fleet.submitCalls).toHaveLength(2);
  });

  it('a tenant still unknown after the re-sync is refused and discarded', async () => {
    const out = await fleet.offerRuns([spec(1, 'ghost')], { resync: async () => {} });
    expect(out[0]).toMatchObject({ state: 'refused', refusal: { code: 'unknown_tenant' } });
    expect(fleet.discarded).toEqual([spec(1, 'ghost').runId]);
  });

  it('when the scheduler cannot be asked, no started run is discarded (a late update must find it) and the error passes on', async () => {
    fleet.submit = () => Promise.reject(new Error('scheduler unreachable'));
    await expect(fleet.offerRuns([spec(1), spec(2)])).rejects.toThrow('scheduler unreachable');
    expect(fleet.discarded).toEqual([]);
    expect(fleet.run(spec(1).runId)?.status).toBe('queued');
    expect(fleet.run(spec(2).runId)?.status).toBe('queued');
  });

  it('a refusal discards only a run this offer created, never one an earlier offer started', async () => {
    const failing = fleet.submit.bind(fleet);
    fleet.submit = () => Promise.reject(new Error('scheduler unreachable'));
    await expect(fleet.offerRuns([spec(1)])).rejects.toThrow('scheduler unreachable');
    fleet.submit = failing;
    // The earlier offer's update may still land: its execution stays whatever this offer hears.
    await fleet.offerRuns([spec(2), spec(3)]);
    const out = await fleet.offerRuns([spec(1), spec(4)]);
    expect(out.map((o) => o.state)).toEqual(['refused', 'refused']);
    expect(fleet.discarded).toEqual([spec(4).runId]);
    expect(fleet.run(spec(1).runId)?.status).toBe('queued');
  });

  it('re-drives a failed run as a new execution the core no longer counts as ended', async () => {
    await fleet.offerRuns([spec(1)]);
    fleet.tick();
    fleet.complete(spec(1).runId, { outcome: 'failed' });
    const [plain] = await fleet.offerRuns([spec(1)]);
    expect(plain?.state).toBe('finished');
    // Past the failed execution's attempts, as the run's spec query gives it for a re-drive.
    const [redriven] = await fleet.offerRuns([{ ...spec(1), firstAttempt: 1 }], { redrive: true });
    expect(redriven).toMatchObject({ state: 'accepted', duplicate: false });
    expect(fleet.run(spec(1).runId)?.status).toBe('queued');
    expect(fleet.submitCalls.at(-1)).toEqual([expect.objectContaining({ attempt: 1, redrive: true })]);
    // A second re-drive meanwhile finds the new execution running: nothing is offered for it again.
    const submits = fleet.submitCalls.length;
    const [again] = await fleet.offerRuns([{ ...spec(1), firstAttempt: 2 }], { redrive: true });
    expect(again).toMatchObject({ state: 'accepted', duplicate: true });
    expect(fleet.submitCalls).toHaveLength(submits);
  });
});

/** Decide, then start (RUN_START_ORDER=decide-first) on the real core with simulated runs. */
describe('offerRuns deciding first', () => {
  let dir: string;
  let effects: EffectStore;
  let fleet: MemoryFleet;
  const first = { decideFirst: true };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'offer-'));
    effects = openSqliteEffectStore(join(dir, 'effects.sqlite'));
    fleet = new MemoryFleet(() => T0, effects, {
      settings: { ...loadConfig({}).fleet, concurrency: 2, interactiveReserve: 0 },
    });
    await fleet.upsertTenant('acme', defaultTenantSettings({ maxQueued: 2 }));
  });
  afterEach(async () => {
    await effects.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('submits before any start; an admitted run starts with its admission, running at once', async () => {
    const out = await fleet.offerRuns([spec(1), spec(2)], first);
    expect(out.map((o) => o.state)).toEqual(['accepted', 'accepted']);
    expect(fleet.submitCalls).toEqual([
      [expect.objectContaining({ admitNow: true }), expect.objectContaining({ admitNow: true })],
    ]);
    expect(fleet.startOptions.map((o) => o.start?.admission?.attempt)).toEqual([0, 0]);
    expect(fleet.run(spec(1).runId)?.status).toBe('running');
    expect(fleet.run(spec(2).runId)?.status).toBe('running');
    expect(fleet.status()).toMatchObject({ inFlight: 2, queued: { total: 0 } });
    // Nothing left for the loop to tell.
    expect(fleet.tick()).toEqual([]);
  });

  it('a run the scheduler cannot admit now keeps its place in the queue: started to wait, not submitted again', async () => {
    await fleet.offerRuns([spec(1), spec(2)], first);
    const [third] = await fleet.offerRuns([spec(3)], first);
    expect(third).toMatchObject({ state: 'accepted', duplicate: false });
    expect(fleet.submitCalls.slice(1)).toEqual([
      [expect.objectContaining({ runId: spec(3).runId, admitNow: true })],
    ]);
    expect(fleet.startOptions.at(-1)).toEqual({ queued: true });
    expect(fleet.run(spec(3).runId)?.status).toBe('queued');
    expect(fleet.status().queued.total).toBe(1);
    fleet.complete(spec(1).runId);
    expect(fleet.tick().map((a) => a.runId)).toEqual([spec(3).runId]);
    expect(fleet.run(spec(3).runId)?.status).toBe('running');
  });

  it('a refused run was never started: nothing to discard, nothing left behind', async () => {
    await fleet.offerRuns([spec(1), spec(2)], first);
    await fleet.offerRuns([spec(3), spec(4)], first);
    const before = fleet.startRunCalls.length;
    const [fifth] = await fleet.offerRuns([spec(5)], first);
    expect(fifth).toMatchObject({ state: 'refused', refusal: { code: 'queue_full' } });
    expect(fleet.startRunCalls).toHaveLength(before);
    expect(fleet.discarded).toEqual([]);
    expect(fleet.run(spec(5).runId)).toBeUndefined();
  });

  it('an answer lost after the decision: the retry is a repeat, its run checks at once, never two leases', async () => {
    // The first message landed (the run admitted) but its answer never came back: no run was started.
    const landed = fleet.submit.bind(fleet);
    fleet.submit = async (units) => {
      await landed(units);
      throw new Error('update timed out');
    };
    await expect(fleet.offerRuns([spec(1)], first)).rejects.toThrow('update timed out');
    expect(fleet.run(spec(1).runId)).toBeUndefined();
    expect(fleet.status().inFlight).toBe(1);
    fleet.submit = landed;
    const [retry] = await fleet.offerRuns([spec(1)], first);
    expect(retry).toMatchObject({ state: 'accepted', duplicate: true });
    expect(fleet.startOptions.at(-1)).toEqual({ start: { checkNow: true } });
    expect(fleet.run(spec(1).runId)?.status).toBe('queued');
    expect(fleet.status()).toMatchObject({ inFlight: 1, queued: { total: 0 } });
  });

  it('re-drives and kept batch items are never decided first', async () => {
    await fleet.offerRuns([spec(1)], { ...first, onRefused: 'keep' });
    expect(fleet.submitCalls[0]).toEqual([expect.not.objectContaining({ admitNow: true })]);
    expect(fleet.startOptions[0]).toEqual({});
  });
});
