import { patched, proxyActivities, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { FleetActivities } from '../contract/activity-types';
import { batchTotal } from '../contract/fleet-port';
import type { AnyBatchSpec } from '../contract/fleet-port';
import { PATCH } from './patches';

const { startBatchChunk, releaseBatchItems } = proxyActivities<FleetActivities>({
  startToCloseTimeout: '5 minutes',
  // The chunk's activity heartbeats every 5 s: a chunk whose worker died is retried after 30 s.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/** Items per activity: one scheduler message and a few hundred workflow starts each. */
const CHUNK = 500;

/**
 * Fans a batch out into runs, a chunk at a time. Every item becomes a run that goes through the same
 * scheduler as any other; items refused for now (queue full, budget) are offered again after their
 * Retry-After, so none is dropped. Progress is counted from the runs themselves (visibility).
 *
 * A batch sent in parts carries only its item count: each chunk's activity reads its items from the
 * batch item store by index, so neither this workflow's input nor any activity argument holds them.
 */
export async function batchWorkflow(spec: AnyBatchSpec): Promise<{ batchId: string; total: number }> {
  const total = batchTotal(spec);
  const inline = 'items' in spec ? spec.items : undefined;
  // Only a batch that carries keys asks: every batch begun before keys replays as it ran.
  const keys: Pick<AnyBatchSpec, 'fairnessKey' | 'fairnessKeys'> =
    (spec.fairnessKey !== undefined || spec.fairnessKeys !== undefined) && patched(PATCH.batchItemKeys.id)
      ? spec
      : {};
  for (let offset = 0; offset < total; offset += CHUNK) {
    let indexes = Array.from({ length: Math.min(CHUNK, total - offset) }, (_, i) => offset + i);
    while (indexes.length > 0) {
      const { refused } = await startBatchChunk({
        batchId: spec.batchId,
        tenant: spec.tenant,
        agent: spec.agent,
        priority: spec.priority,
        ...(inline ? { items: indexes.map((i) => inline[i]) } : {}),
        indexes,
        estimatedTokensPerItem: spec.estimatedTokensPerItem,
        ...(spec.onBudgetExhausted ? { onBudgetExhausted: spec.onBudgetExhausted } : {}),
        ...(spec.pool ? { pool: spec.pool } : {}),
        ...(keys.fairnessKey !== undefined ? { fairnessKey: keys.fairnessKey } : {}),
        ...(keys.fairnessKeys ? { fairnessKeys: indexes.map((i) => keys.fairnessKeys?.[i] ?? null) } : {}),
        createdAt: spec.createdAt,
      });
      indexes = refused.map((r) => r.index);
      if (indexes.length > 0) await sleep(Math.max(1, ...refused.map((r) => r.retryAfterSeconds)) * 1000);
    }
    setCurrentDetails(`created ${Math.min(offset + CHUNK, total)} of ${total} runs`);
  }
  // Every item's run exists now and carries its own input: the stored items are no longer needed.
  if (!inline) await releaseBatchItems(spec.batchId);
  return { batchId: spec.batchId, total };
}
