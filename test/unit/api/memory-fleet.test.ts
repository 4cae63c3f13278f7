import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { offerRuns } from '../../../src/contract/offer-runs';
import { defaultTenantSettings } from '../../../src/scheduler/tenants';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import { MemoryFleet } from './memory-fleet';

/**
 * What the in-memory fleet does on the Temporal side that the contract suite cannot reach without a
 * human gate on a real run: a run re-queued after its gate offers itself as the run workflow's
 * queueAgain does (`src/workflows/run-lifecycle.ts`).
 */
/** A run id in the API's form for tenant g. */
const A = 'run-g-00000000000000000a0a';

describe('the in-memory fleet re-queues as the run workflow does', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fairway-memory-fleet-'));
  const effects = openSqliteEffectStore(join(dir, 'effects.sqlite'));
  afterEach(async () => {
    await effects.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('for what is left of its estimate, with what it used, and again until accepted', async () => {
    const fleet = new MemoryFleet(() => Date.now(), effects);
    await fleet.upsertTenant('g', defaultTenantSettings());
    const spec = (runId: string) => ({
      runId,
      tenant: 'g',
      agent: 'synthetic',
      priority: 'standard' as const,
      input: { steps: 1 },
      estimatedTokens: 100,
      createdAt: new Date().toISOString(),
    });
    expect(await offerRuns(fleet, [spec(A)])).toMatchObject([{ state: 'accepted' }]);
    fleet.tick();
    fleet.awaitApproval(A, 30);
    // The scheduler chain is lost meanwhile: it knows no tenant, so the offer after the decision is
    // refused (unknown_tenant) until the API tells it the tenant again.
    fleet.resetScheduler();
    expect(await fleet.decide(A, 'approve')).toBe(true);
    expect(fleet.resubmits.get(A)).toEqual({
      runId: A,
      tenant: 'g',
      priority: 'standard',
      cost: 70,
      attempt: 1,
      usedTokens: 30,
    });
    expect(fleet.run(A)?.status).toBe('queued');
    fleet.tick();
    expect(fleet.resubmits.has(A), 'refused: offered again later').toBe(true);
    await fleet.upsertTenant('g', defaultTenantSettings());
    fleet.tick(); // accepted now, and admitted
    expect(fleet.resubmits.size).toBe(0);
    expect(fleet.run(A)?.status).toBe('running');
    expect(fleet.records.get(A)?.attempt).toBe(1);
  });
});
