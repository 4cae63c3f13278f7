import { existsSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/infra/cluster/child';
import { startDevServer } from '../../src/infra/dev-server';
import type { DevServer } from '../../src/infra/dev-server';

/** Debian's Chromium, which the browser tests drive through playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';
/** Without Chromium a browser test skips, unless CI is set: then it fails. */
export const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser) console.warn(`browser test skipped: ${CHROMIUM} is missing (apt-get install chromium)`);
/** Where the browser tests leave their screenshots. */
export const SCREENSHOT_DIR = path.resolve(__dirname, '..', '..', 'test-results');
/** A provider (the simulator) fast enough that the fleet, not the model, sets the pace. */
export const FAST = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' };
/** Headless Chromium as a test needs it: no sandbox (root in a container), no GPU, no calls home. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** A dev server of its own with its Web UI on a free port (the suite's shared server has none). */
export async function startDevServerWithUi(): Promise<{ dev: DevServer; uiPort: number; uiUrl: string }> {
  const uiPort = await freePort();
  const dev = await startDevServer({
    cliPath: process.env.TEMPORAL_CLI_PATH,
    port: undefined,
    uiPort,
    dbFile: undefined,
    namespace: 'default',
  });
  return { dev, uiPort, uiUrl: `http://127.0.0.1:${uiPort}` };
}
