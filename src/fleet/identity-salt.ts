import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Where a generated tool-identity salt is kept, beside the stores. */
export const IDENTITY_SALT_FILE = 'tool-identity-salt';

function readKept(file: string): string | undefined {
  try {
    const kept = readFileSync(file, 'utf8').trim();
    return kept.length >= 32 ? kept : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The per-deployment salt of tool identities: the configured one (TOOL_IDENTITY_SALT; set the same on
 * every host of a cluster), else the one kept in `DATA_DIR/tool-identity-salt` (owner-readable), else
 * a new one written there. A process that loses the race to create the file reads the winner's.
 */
export function toolIdentitySalt(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const file = path.join(dataDir, IDENTITY_SALT_FILE);
  const kept = readKept(file);
  if (kept) return kept;
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const made = readKept(file);
  if (!made) throw new Error(`${file} holds no usable salt; delete it to make a new one.`);
  return made;
}
