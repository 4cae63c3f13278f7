import { appendFile } from 'node:fs/promises';
import path from 'node:path';

/** Where `publish` writes: one JSON line per published answer (PUBLISH_FILE, default ./published.jsonl). */
export const PUBLISH_FILE = path.resolve(process.env.PUBLISH_FILE ?? 'published.jsonl');

/**
 * The `publish` effect: the worker calls it once per run (its key is `<runId>:publish`), across
 * crashes and retries, and hands the agent back what it returned. A real one would post to a CMS
 * with `key` as its idempotency key.
 */
export async function publish(
  args: Record<string, unknown>,
  meta: { key: string; runId: string; tenant: string },
): Promise<{ publishedTo: string }> {
  const line = {
    key: meta.key,
    runId: meta.runId,
    tenant: meta.tenant,
    ...args,
    at: new Date().toISOString(),
  };
  await appendFile(PUBLISH_FILE, `${JSON.stringify(line)}\n`);
  return { publishedTo: PUBLISH_FILE };
}
