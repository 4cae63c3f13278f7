import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetPort, RunListItem, RunListQuery, RunSpec } from '../../src/contract/fleet-port';
import { TERMINAL } from '../../src/client/runs';
import { defaultTenantSettings } from '../../src/scheduler/tenants';

/**
 * A fleet the contract runs against, with what the fleet does on its own (run its runs, make them
 * visible) made explicit: the in-memory fleet moves when told, the Temporal fleet by itself.
 */
export interface FleetUnderTest {
  fleet: FleetPort;
  /** Runs the admitted runs among `runIds` to their end (memory: tick and complete; Temporal: its workers). */
  finish(runIds: string[]): Promise<void>;
  /**
   * Reads until `done` holds, and returns that value; throws with the last value past the deadline.
   * Memory answers at once; Temporal's visibility and deletes lag behind what a call did.
   */
  eventually<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T>;
  close(): Promise<void>;
}

/** A run id in the API's form for `tenant` (the scheduler refuses any other as invalid_unit). */
const runIdOf = (tenant: string) => `run-${tenant}-${randomBytes(10).toString('hex')}`;

/** A one-step synthetic run; `stepMs` keeps it running a while where runs really run. */
function spec(tenant: string, o: { estimatedTokens?: number; stepMs?: number } = {}): RunSpec {
  return {
    runId: runIdOf(tenant),
    tenant,
    agent: 'synthetic',
    priority: 'standard',
    input: { steps: 1, tokensPerStep: 10, stepMs: o.stepMs ?? 0 },
    estimatedTokens: o.estimatedTokens ?? 10,
    createdAt: new Date().toISOString(),
  };
}

/**
 * The listing is live, not a snapshot: a run may show twice only if it finished between the two
 * pages, first unfinished and then finished.
 */
function expectTwiceOnlyOnceFinished(items: RunListItem[]): void {
  const first = new Map<string, RunListItem>();
  for (const item of items) {
    const seen = first.get(item.runId);
    if (!seen) {
      first.set(item.runId, item);
      continue;
    }
    expect(FINISHED.has(seen.status), `${item.runId} listed twice, first ${seen.status}`).toBe(false);
    expect(FINISHED.has(item.status), `${item.runId} listed again as ${item.status}`).toBe(true);
  }
}

const FINISHED = new Set(TERMINAL);

/** Every page of a listing, following its cursor to the end. */
async function allPages(
  fleet: FleetPort,
  q: Omit<RunListQuery, 'cursor'>,
): Promise<{ pages: RunListItem[][]; ids: string[] }> {
  const pages: RunListItem[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await fleet.listRuns({ ...q, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page.items);
    if (page.nextCursor === null) break;
    expect(pages.length, 'pages before the cursor ended').toBeLessThan(50);
    cursor = page.nextCursor;
  }
  return { pages, ids: pages.flat().map((r) => r.runId) };
}

/**
 * What the HTTP layer relies on from any fleet (`src/contract/fleet-port.ts`), written once: the API
 * unit tests' in-memory fleet and the Temporal fleet on the dev server both run it, so the fake
 * cannot drift from the real one unseen.
 */
export function fleetPortContract(name: string, start: () => Promise<FleetUnderTest>): void {
  describe(`the fleet port contract: ${name}`, () => {
    let f: FleetUnderTest;
    let fleet: FleetPort;
    let n = 0;
    /** A new tenant, known to the scheduler. */
    const tenant = async (settings: Parameters<typeof defaultTenantSettings>[0] = {}) => {
      const t = `contract-${Date.now().toString(36)}-${++n}`;
      await fleet.upsertTenant(t, defaultTenantSettings(settings));
      return t;
    };

    beforeAll(async () => {
      f = await start();
      fleet = f.fleet;
    });
    afterAll(() => f?.close());

    it('answers an unknown run with null, and cannot cancel it', async () => {
      expect(await fleet.getRun('contract-no-such-run')).toBeNull();
      expect(await fleet.cancelRun('contract-no-such-run')).toBe(false);
    });

    it('offers a run once: a second offer is a duplicate, and a finished run is never run again', async () => {
      const t = await tenant();
      const s = { ...spec(t, { stepMs: 2000 }), fairnessKey: 'user-7' };
      expect(await fleet.offerRuns([s])).toEqual([
        { runId: s.runId, state: 'accepted', duplicate: false, held: false },
      ]);
      expect(await fleet.offerRuns([s])).toEqual([
        { runId: s.runId, state: 'accepted', duplicate: true, held: false },
      ]);
      await f.finish([s.runId]);
      const done = await f.eventually(
        () => fleet.getRun(s.runId),
        (v) => v?.status === 'completed',
      );
      // A finished run still names who it was for.
      expect(done).toMatchObject({
        runId: s.runId,
        tenant: t,
        agent: 'synthetic',
        status: 'completed',
        fairnessKey: 'user-7',
      });
      expect(done!.admissionSeq).toEqual(expect.any(Number));
      expect(await fleet.offerRuns([s])).toEqual([{ runId: s.runId, state: 'finished' }]);
      expect(await fleet.cancelRun(s.runId)).toBe(false);
    });

    it('refuses a run its budget cannot cover, with a Retry-After, and leaves nothing of it', async () => {
      const t = await tenant({ budget: { tokens: 100, period: 'day' } });
      const s = spec(t, { estimatedTokens: 1000 });
      const [out] = await fleet.offerRuns([s]);
      expect(out).toMatchObject({ runId: s.runId, state: 'refused', refusal: { code: 'budget_exhausted' } });
      expect(out?.state === 'refused' && out.refusal.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      await f.eventually(
        () => fleet.getRun(s.runId),
        (v) => v === null,
      );
      // What the budget covers is still taken.
      const small = spec(t, { estimatedTokens: 50 });
      expect(await fleet.offerRuns([small])).toMatchObject([{ runId: small.runId, state: 'accepted' }]);
      await f.finish([small.runId]);
    });

    it('cancels a run that has not finished, once', async () => {
      const t = await tenant();
      const s = spec(t, { stepMs: 60_000 });
      expect(await fleet.offerRuns([s])).toMatchObject([{ state: 'accepted' }]);
      expect(await fleet.cancelRun(s.runId)).toBe(true);
      await f.eventually(
        () => fleet.getRun(s.runId),
        (v) => v?.status === 'cancelled',
      );
      await f.eventually(
        () => fleet.cancelRun(s.runId),
        (v) => v === false,
      );
    });

    it("lists a tenant's runs page by page with a cursor: each run once, over more than one page", async () => {
      const t = await tenant();
      const other = await tenant();
      const specs = Array.from({ length: 7 }, () => spec(t));
      const outcomes = await fleet.offerRuns([...specs, spec(other)]);
      expect(outcomes.map((o) => o.state)).toEqual(Array(8).fill('accepted'));
      const want = specs.map((s) => s.runId).sort();
      await f.eventually(
        () => fleet.listRuns({ tenant: t, limit: 100 }),
        (v) => v.items.length === want.length,
      );
      const { pages, ids } = await allPages(fleet, { tenant: t, limit: 3 });
      expect(pages.length, 'pages of 3 for 7 runs').toBeGreaterThanOrEqual(3);
      for (const p of pages) expect(p.length).toBeLessThanOrEqual(3);
      expect([...new Set(ids)].sort(), 'every run, none of another tenant').toEqual(want);
      expectTwiceOnlyOnceFinished(pages.flat());
      for (const item of pages.flat())
        expect(item).toMatchObject({ tenant: t, agent: 'synthetic', priority: 'standard', batchId: null });

      // With a status filter too, once they all completed.
      await f.finish(want);
      await f.eventually(
        () => fleet.listRuns({ tenant: t, status: 'completed', limit: 100 }),
        (v) => v.items.length === want.length,
      );
      const completed = await allPages(fleet, { tenant: t, status: 'completed', limit: 2 });
      expect(completed.pages.length).toBeGreaterThanOrEqual(4);
      expect([...completed.ids].sort()).toEqual(want);
      expect((await allPages(fleet, { tenant: t, status: 'queued', limit: 2 })).ids).toEqual([]);
    });

    it("names a batch's runs <batchId>-<i> and counts them up to its total", async () => {
      const t = await tenant();
      const batchId = `batch-${t}-${randomBytes(8).toString('hex')}`;
      const verdict = await fleet.createBatch({
        batchId,
        tenant: t,
        agent: 'synthetic',
        priority: 'batch',
        items: [{ steps: 1 }, { steps: 1 }, { steps: 1 }],
        estimatedTokensPerItem: 10,
        createdAt: new Date().toISOString(),
      });
      expect(verdict).toEqual({ accepted: true });
      const ids = [0, 1, 2].map((i) => `${batchId}-${i}`);
      await f.eventually(
        () => Promise.all(ids.map((id) => fleet.getRun(id))),
        (vs) => vs.every((v) => v !== null),
      );
      await f.finish(ids);
      const view = await f.eventually(
        () => fleet.getBatch(batchId),
        (v) => v?.completed === 3,
      );
      expect(view).toEqual({
        batchId,
        tenant: t,
        total: 3,
        queued: 0,
        running: 0,
        completed: 3,
        failed: 0,
        cancelled: 0,
      });
      for (const id of ids) expect(await fleet.getRun(id)).toMatchObject({ batchId, priority: 'batch' });
      // Refused whole when it cannot fit: nothing of it starts.
      const tight = await tenant({ maxQueued: 2 });
      const tightId = `batch-${tight}-${randomBytes(8).toString('hex')}`;
      const refused = await fleet.createBatch({
        batchId: tightId,
        tenant: tight,
        agent: 'synthetic',
        priority: 'batch',
        items: [{}, {}, {}],
        estimatedTokensPerItem: 10,
        createdAt: new Date().toISOString(),
      });
      expect(refused).toMatchObject({ accepted: false, code: 'queue_full' });
      expect(await fleet.getBatch(tightId)).toBeNull();
    });
  });
}
