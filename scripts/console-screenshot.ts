import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { BENCH_ADMIN, startBenchStack } from '../bench/lib/bench-stack';
import { createProgress } from '../bench/lib/progress';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/support/chromium';

/**
 * `npx tsx scripts/console-screenshot.ts [out.png]`: the console screenshot in docs/operating.md. A whole stack
 * (own dev server), four tenants of different weights (one with a small budget), offered about
 * twice the provider's quota; after a minute the simulator's quota is cut to 30% for 45 s, then
 * restored. The console is photographed in headless Chromium (Debian's /usr/bin/chromium) a little
 * after the restore, so every chart has something to show.
 */
const OUT = path.resolve(process.argv[2] ?? 'docs/console.png');
const TPM = 120_000;
const STEPS = 4;
const TOKENS_PER_STEP = 150;
const CUT_AT = 60;
const RESTORE_AT = 105;
const SHOT_AT = 150;
const TENANTS = [
  { name: 'acme', weight: 3, perSecond: 2.5, priority: 'interactive' },
  { name: 'globex', weight: 2, perSecond: 2, priority: 'standard' },
  { name: 'initech', weight: 1, perSecond: 2.5, priority: 'batch' },
  {
    name: 'umbrella',
    weight: 1,
    perSecond: 0.5,
    priority: 'standard',
    budget: { tokens: 30_000, period: 'day' },
  },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const s = await startBenchStack({
    FLEET_CONCURRENCY: '50',
    MODEL_TPM: String(TPM),
    MODEL_RPM: '10000000',
  });
  const userDir = mkdtempSync(path.join(os.tmpdir(), 'fairway-shot-'));
  const bar = createProgress('console screenshot', SHOT_AT, { unit: 's' });
  let stop = false;
  const loaders: Promise<void>[] = [];
  try {
    const keys: string[] = [];
    for (const t of TENANTS) {
      keys.push(
        await s.tenant(t.name, {
          weight: t.weight,
          maxQueued: 60,
          ...(t.budget ? { budget: t.budget } : {}),
        }),
      );
    }
    const simCapacity = (tpm: number) =>
      fetch(`${s.simUrl}/admin/capacity`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tpm }),
      });
    const t0 = Date.now();
    TENANTS.forEach((t, i) => {
      loaders.push(
        (async () => {
          let sent = 0;
          while (!stop) {
            const due = Math.floor(((Date.now() - t0) / 1000) * t.perSecond);
            while (sent < due) {
              sent++;
              void s
                .call(
                  'POST',
                  '/v1/runs',
                  {
                    agent: 'synthetic',
                    priority: t.priority,
                    input: { steps: STEPS, tokensPerStep: TOKENS_PER_STEP, stepMs: 500 },
                  },
                  keys[i],
                )
                .catch(() => undefined); // the stack stops under the last requests
            }
            await sleep(50);
          }
        })(),
      );
    });

    const browser = await chromium.launchPersistentContext(userDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      deviceScaleFactor: 1,
      args: CHROMIUM_ARGS,
    });
    try {
      const page = await browser.newPage();
      await page.goto(`${s.apiUrl}/console`);
      await page.getByLabel('Token', { exact: true }).fill(BENCH_ADMIN);
      await page.keyboard.press('Enter');
      let cut = false;
      let restored = false;
      for (;;) {
        const t = (Date.now() - t0) / 1000;
        bar.update(Math.min(SHOT_AT, Math.floor(t)), cut && !restored ? 'quota cut' : '');
        if (!cut && t >= CUT_AT) {
          await simCapacity(Math.round(TPM * 0.3));
          cut = true;
          bar.log(`--- quota cut to ${Math.round(TPM * 0.3)} tokens/min`);
        }
        if (!restored && t >= RESTORE_AT) {
          await simCapacity(TPM);
          restored = true;
          bar.log(`--- quota restored to ${TPM} tokens/min`);
        }
        if (t >= SHOT_AT) break;
        await sleep(1000);
      }
      // Explain one of the queued runs of the lightest tenant, so that panel shows a real answer.
      const queued = await s.call('GET', '/v1/runs?tenant=initech&status=queued&limit=1');
      const runId = queued.body?.items?.[0]?.runId as string | undefined;
      if (runId) {
        await page.getByLabel('Run id').fill(runId);
        await page.getByRole('button', { name: 'Explain' }).click();
        await page.locator('#explain-result').waitFor({ timeout: 10_000 });
      }
      await sleep(2500);
      await page.screenshot({ path: OUT, fullPage: true });
      bar.finish();
      console.log(`wrote ${OUT}`);
    } finally {
      await browser.close();
    }
  } finally {
    stop = true;
    await Promise.all(loaders);
    rmSync(userDir, { recursive: true, force: true });
    await s.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
