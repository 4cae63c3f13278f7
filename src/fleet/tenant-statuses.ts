import type { TenantStatus } from '../scheduler/types';
import { mapLimit } from '../util/map-limit';

/** Tenants per `tenants` query: ~0.5 KB each keeps one answer far below Temporal's payload limit. */
export const TENANTS_PER_QUERY = 200;

/** A scheduler run by workflow code older than the `tenants` query answers with one of these. */
const NOT_REGISTERED = /did not register a handler|unknown queryType|not registered/i;

/**
 * Many tenants' status with one `tenants` query per TENANTS_PER_QUERY names. Against a scheduler whose
 * code predates that query (a rolling deploy), falls back to one `tenant` query each.
 */
export async function readTenantStatuses(
  tenants: string[],
  many: (names: string[]) => Promise<(TenantStatus | null)[]>,
  one: (name: string) => Promise<TenantStatus | null>,
): Promise<(TenantStatus | null)[]> {
  const chunks: string[][] = [];
  for (let i = 0; i < tenants.length; i += TENANTS_PER_QUERY)
    chunks.push(tenants.slice(i, i + TENANTS_PER_QUERY));
  try {
    const answers: (TenantStatus | null)[][] = [];
    for (const chunk of chunks) answers.push(await many(chunk));
    return answers.flat();
  } catch (err) {
    if (!(err instanceof Error && NOT_REGISTERED.test(err.message))) throw err;
    return mapLimit(tenants, 8, one);
  }
}
