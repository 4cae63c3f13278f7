import { existsSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { ensureScheduler } from '../../src/fleet/scheduler-handle';
import { startDevServer } from '../../src/infra/dev-server';
import type { DevServer } from '../../src/infra/dev-server';
import { freePort } from '../../src/infra/cluster/child';

const CHROMIUM = '/usr/bin/chromium';
/** Without Chromium the browser test skips, unless CI is set: then it fails. */
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser) console.warn(`browser test skipped: ${CHROMIUM} is missing (apt-get install chromium)`);

/** What an operator sees: the Temporal Web UI of the embedded dev server lists the scheduler workflow. */
describe('Temporal Web UI (headless Chromium)', () => {
  let dev: DevServer;
  let uiPort: number;
  let connection: Connection;

  beforeAll(async () => {
    uiPort = await freePort();
    dev = await startDevServer({
      cliPath: process.env.TEMPORAL_CLI_PATH,
      port: undefined,
      uiPort,
      dbFile: undefined,
      namespace: 'default',
    });
    connection = await Connection.connect({ address: dev.address });
    const client = new Client({ connection });
    await ensureScheduler(
      client,
      loadConfig({ TEMPORAL_ADDRESS: dev.address, SCHEDULER_WORKFLOW_ID: 'scheduler' }),
    );
  });
  afterAll(async () => {
    await connection?.close();
    await dev?.stop();
  });

  it.skipIf(skipBrowser)('lists the scheduler workflow', async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${uiPort}/namespaces/default/workflows`);
      const row = page.getByText('scheduler', { exact: true }).first();
      await row.waitFor({ timeout: 30_000 });
      expect(await row.isVisible()).toBe(true);
      await expect(page.getByText('schedulerWorkflow').first().isVisible()).resolves.toBe(true);
    } finally {
      await browser.close();
    }
  });
});
