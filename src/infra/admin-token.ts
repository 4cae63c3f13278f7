import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Where a generated admin token is kept, beside the stores it guards. */
export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * The admin token: the configured one, else the one generated on an earlier start (kept in
 * `DATA_DIR/admin-token`, readable by the owner only), else a new one written there, so a restart on
 * the same data keeps the same token.
 */
export function adminTokenOf(
  configured: string | undefined,
  dataDir: string,
): { token: string; generated: boolean } {
  if (configured) return { token: configured, generated: false };
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept.length >= 32) return { token: kept, generated: true };
  } catch {
    /* none yet */
  }
  const token = `fw_admin_${randomBytes(24).toString('base64url')}`;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, generated: true };
}
