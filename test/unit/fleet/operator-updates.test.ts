import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { countingScheduler } from '../../support/counting-scheduler';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPERATOR_UPDATE_PERMITS, PermitGate } from '../../../src/activities/scheduler-updates';
import { loadConfig } from '../../../src/config';
import { createTemporalFleet } from '../../../src/fleet/temporal-fleet';
import { openUpdatePermits } from '../../../src/stores/open';
import type { UpdatePermits } from '../../../src/stores/update-permits/update-permits';
import type { EffectStore } from '../../../src/stores/effects/effect-store';
import { defaultTenantSettings } from '../../../src/scheduler';

const log = pino({ level: 'silent' });

const fakeScheduler = () => countingScheduler({ draining: false });

describe("the API's tenant and operator updates share the fleet's operator permits", () => {
  let dir: string;
  let permits: UpdatePermits[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-operator-updates-'));
  });
  afterEach(async () => {
    await Promise.all(permits.map((p) => p.close()));
    permits = [];
    rmSync(dir, { recursive: true, force: true });
  });

  it('three API processes saving tenants and draining at once never have more than the share in flight', async () => {
    const config = loadConfig({ DATA_DIR: dir });
    const { client, seen } = fakeScheduler();
    const fleets = await Promise.all(
      [0, 1, 2].map(async () => {
        const store = await openUpdatePermits(join(dir, 'call-intents.db'));
        permits.push(store);
        const gate = new PermitGate(
          store,
          `${config.schedulerWorkflowId}:operator`,
          { slots: OPERATOR_UPDATE_PERMITS, ttlMs: 15_000 },
          log,
        );
        return createTemporalFleet(client, config, {} as EffectStore, undefined, gate);
      }),
    );
    const settings = defaultTenantSettings();
    await Promise.all(
      fleets.flatMap((fleet, i) => [
        ...Array.from({ length: 8 }, (_, j) => fleet.upsertTenant(`t-${i}-${j}`, settings)),
        fleet.patchScheduler({ concurrency: 10 }),
        fleet.drain('hold'),
        fleet.resume(),
      ]),
    );
    expect(seen.answered).toBe(3 * 11);
    expect(seen.max).toBe(OPERATOR_UPDATE_PERMITS);
  });
});
