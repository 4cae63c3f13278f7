import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import { fleetPortContract } from '../../support/fleet-port-contract';
import { MemoryFleet } from './memory-fleet';

/** The fleet port contract on the in-memory fleet the API unit tests use. */
fleetPortContract('in memory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fairway-contract-'));
  const effects = openSqliteEffectStore(join(dir, 'effects.sqlite'));
  const fleet = new MemoryFleet(() => Date.now(), effects);
  return {
    fleet,
    async finish(runIds) {
      for (let round = 0; round < 100; round++) {
        fleet.tick();
        for (const id of runIds) if (fleet.run(id)?.status === 'running') fleet.complete(id);
        const left = runIds.filter((id) => {
          const s = fleet.run(id)?.status;
          return s !== 'completed' && s !== 'failed' && s !== 'cancelled';
        });
        if (left.length === 0) return;
      }
      throw new Error(`runs never finished: ${runIds.join(', ')}`);
    },
    async eventually(read, done) {
      const v = await read();
      if (!done(v)) throw new Error(`not so in memory: ${JSON.stringify(v)}`);
      return v;
    },
    async close() {
      await effects.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
