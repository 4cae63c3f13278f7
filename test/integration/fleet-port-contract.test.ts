import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTemporalFleet } from '../../src/fleet/temporal-fleet';
import { openSqliteEffectStore } from '../../src/stores/effects/effect-store-sqlite';
import { fleetPortContract } from '../support/fleet-port-contract';
import { startTestStack, waitFor } from '../support/stack';

/** The fleet port contract on the Temporal fleet: the dev server, the scheduler workflow, a worker. */
fleetPortContract('on Temporal', async () => {
  const s = await startTestStack();
  const dir = mkdtempSync(join(tmpdir(), 'fairway-contract-'));
  const effects = openSqliteEffectStore(join(dir, 'effects.sqlite'));
  const fleet = createTemporalFleet(s.client, s.config, effects);
  return {
    fleet,
    async finish(runIds) {
      await waitFor(
        () => Promise.all(runIds.map((id) => fleet.getRun(id))),
        (vs) => vs.every((v) => v !== null && ['completed', 'failed', 'cancelled'].includes(v.status)),
        60_000,
      );
    },
    // A running step learns of its cancel from a heartbeat's answer, and the SDK sends heartbeats at
    // most every 0.8 × its 30-s heartbeat timeout: a cancel may take 24 s to land before the run ends.
    eventually: (read, done) => waitFor(read, done, 90_000),
    async close() {
      await s.close();
      await effects.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
