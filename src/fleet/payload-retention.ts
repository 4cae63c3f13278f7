import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { PayloadStore } from '../stores/payloads/payload-store';
import { PRUNE_BATCH } from '../stores/payloads/payload-store';
import { claimCheckKeys } from './claim-check';

/** Prune statements one sweep runs at most (PRUNE_BATCH payloads each); the next sweep goes on. */
const MAX_BATCHES = 20;

/**
 * One retention sweep of the payload store: the claim-checked payloads of the scheduler's current
 * run are marked used first (a chain may stay open longer than the retention, and its replay needs
 * its snapshot), then payloads neither written nor read for `retentionMs` are deleted. A run reads
 * its own payloads whenever it is replayed or read through the API; one open and untouched for
 * longer than the retention is the operator's to avoid (PAYLOAD_RETENTION_DAYS). Returns how many
 * payloads it deleted.
 */
export async function prunePayloads(opts: {
  store: PayloadStore;
  client: Client;
  schedulerWorkflowId: string;
  retentionMs: number;
  now?: number;
  log?: Logger;
}): Promise<number> {
  const now = opts.now ?? Date.now();
  const history = await opts.client.workflow
    .getHandle(opts.schedulerWorkflowId)
    .fetchHistory()
    .catch(() => null);
  // Without the scheduler's history nothing is deleted: its snapshot might be among the oldest.
  if (history === null) {
    opts.log?.warn('payload retention: the scheduler history could not be read; nothing pruned this time');
    return 0;
  }
  for (const key of claimCheckKeys(history)) await opts.store.touch(key, now);
  let deleted = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await opts.store.prune(now - opts.retentionMs, PRUNE_BATCH);
    deleted += n;
    if (n < PRUNE_BATCH) break;
  }
  if (deleted > 0)
    opts.log?.info({ deleted }, 'payload retention: deleted payloads past PAYLOAD_RETENTION_DAYS');
  return deleted;
}
