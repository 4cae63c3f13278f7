import { existsSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { ensureScheduler } from '../../src/fleet/scheduler-handle';
import type { DevServer } from '../../src/infra/dev-server';
import { CHROMIUM, CHROMIUM_ARGS, skipBrowser, startDevServerWithUi } from '../support/chromium';

/** What an operator sees: the Temporal Web UI of the embedded dev server lists the scheduler workflow. */
describe('Temporal Web UI (headless Chromium)', () => {
  let dev: DevServer;
  let uiPort: number;
  let connection: Connection;

  beforeAll(async () => {
    ({ dev, uiPort } = await startDevServerWithUi());
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
      args: [...CHROMIUM_ARGS, '--disable-quic'],
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
