import { proxyActivities, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { FleetActivities } from '../activities/types';
import type { BatchSpec } from '../contract/fleet-port';

const { startBatchChunk } = proxyActivities<FleetActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/** Items per activity: one scheduler message and a few hundred workflow starts each. */
const CHUNK = 500;

/**
 * Fans a batch out into runs, a chunk at a time. Every item becomes a run that goes through the same
 * scheduler as any other; items refused for now (queue full, budget) are offered again after their
 * Retry-After, so none is dropped. Progress is counted from the runs themselves (visibility).
 */
export async function batchWorkflow(spec: BatchSpec): Promise<{ batchId: string; total: number }> {
  const total = spec.items.length;
  for (let offset = 0; offset < total; offset += CHUNK) {
    let indexes = spec.items.slice(offset, offset + CHUNK).map((_, i) => offset + i);
    while (indexes.length > 0) {
      const { refused } = await startBatchChunk({
        batchId: spec.batchId,
        tenant: spec.tenant,
        agent: spec.agent,
        priority: spec.priority,
        items: indexes.map((i) => spec.items[i]),
        indexes,
        estimatedTokensPerItem: spec.estimatedTokensPerItem,
        ...(spec.onBudgetExhausted ? { onBudgetExhausted: spec.onBudgetExhausted } : {}),
        createdAt: spec.createdAt,
      });
      indexes = refused.map((r) => r.index);
      if (indexes.length > 0) await sleep(Math.max(1, ...refused.map((r) => r.retryAfterSeconds)) * 1000);
    }
    setCurrentDetails(`created ${Math.min(offset + CHUNK, total)} of ${total} runs`);
  }
  return { batchId: spec.batchId, total };
}
