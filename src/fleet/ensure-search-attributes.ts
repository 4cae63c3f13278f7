import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { FAIRWAY_SEARCH_ATTRIBUTES } from '../contract/search-attributes';

/**
 * Registers Fairway's search attributes on an external server (the embedded dev server registers
 * them at start). Idempotent: existing ones are left alone.
 */
export async function ensureSearchAttributes(client: Client, namespace: string): Promise<void> {
  const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
  const missing = FAIRWAY_SEARCH_ATTRIBUTES.filter((k) => !(k.name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  await client.connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((k) => [k.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
    ),
  });
}
