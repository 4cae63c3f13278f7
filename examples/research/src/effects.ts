import { appendFile, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Where `publish` writes: one JSON line per published answer (PUBLISH_FILE, default ./published.jsonl). */
export const PUBLISH_FILE = path.resolve(process.env.PUBLISH_FILE ?? 'published.jsonl');

/** True when the file already holds a line for `key` (an earlier attempt wrote it, then its worker died). */
async function alreadyPublished(key: string): Promise<boolean> {
  const text = await readFile(PUBLISH_FILE, 'utf8').catch(() => '');
  return text.split('\n').some((line) => line !== '' && (JSON.parse(line) as { key?: string }).key === key);
}

/**
 * The `publish` effect. The worker runs it once per run (its key is `<runId>:publish`) and hands the
 * agent back what it returned; an attempt that may already have acted comes back as a `redelivery`,
 * and the key keeps the outside act to one. A real one would post to a CMS with `key` as its
 * idempotency key.
 */
export async function publish(
  args: Record<string, unknown>,
  meta: { key: string; runId: string; tenant: string; redelivery?: boolean },
): Promise<{ publishedTo: string }> {
  if (!(meta.redelivery && (await alreadyPublished(meta.key)))) {
    const line = {
      key: meta.key,
      runId: meta.runId,
      tenant: meta.tenant,
      ...args,
      at: new Date().toISOString(),
    };
    await appendFile(PUBLISH_FILE, `${JSON.stringify(line)}\n`);
  }
  return { publishedTo: PUBLISH_FILE };
}
