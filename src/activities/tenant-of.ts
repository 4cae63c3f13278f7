import type { Client } from '@temporalio/client';
import { TenantIdKey } from '../contract/search-attributes';

/**
 * The tenant of a run, for steps whose request does not name it: read once from the run workflow's
 * `TenantId` search attribute, then remembered (the most recent `max` runs).
 */
export function tenantLookup(client: Client, max = 10_000): (runId: string) => Promise<string | undefined> {
  const known = new Map<string, string>();
  return async (runId) => {
    const hit = known.get(runId);
    if (hit !== undefined) return hit;
    const d = await client.workflow
      .getHandle(runId)
      .describe()
      .catch(() => null);
    const tenant = d?.typedSearchAttributes.get(TenantIdKey);
    if (tenant === undefined) return undefined;
    if (known.size >= max) known.delete(known.keys().next().value as string);
    known.set(runId, tenant);
    return tenant;
  };
}
