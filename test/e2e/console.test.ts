import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack } from '../support/stack';
import type { TestStack } from '../support/stack';
import { CHROMIUM, CHROMIUM_ARGS, FAST, SCREENSHOT_DIR, skipBrowser } from '../support/chromium';

/** Chart figures report how many of their points carry a value above zero (data-nonzero). */
const nonZero = (page: Page, id: string) =>
  page.locator(`#${id}`).evaluate((el: any) => Number(el.dataset.nonzero ?? 0));

/** Pixels of the chart's canvas that are not background: proof that uPlot drew something. */
const inkedPixels = (page: Page, id: string) =>
  page.locator(`#${id} canvas`).evaluate((canvas: any) => {
    const data: Uint8ClampedArray = canvas
      .getContext('2d')
      .getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    // The lane colours are saturated; axes and grid are grey. Count saturated pixels.
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b, a] = [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
      if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 60) n++;
    }
    return n;
  });

describe.skipIf(skipBrowser)('the operator console (headless Chromium)', () => {
  let s: TestStack;
  let userDir: string;
  let context: BrowserContext;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
    s = await startTestStack({ FLEET_CONCURRENCY: '8', ...FAST });
    for (const [name, weight] of [
      ['acme', 3],
      ['globex', 1],
      ['initech', 1],
    ] as const) {
      keys[name] = await s.tenant(`${name}-${s.id}`, { weight });
    }
    userDir = mkdtempSync(path.join(os.tmpdir(), 'fairway-chromium-'));
    context = await chromium.launchPersistentContext(userDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: CHROMIUM_ARGS,
    });
  });
  afterAll(async () => {
    await context?.close();
    if (userDir) rmSync(userDir, { recursive: true, force: true });
    await s?.close();
  });

  it('shows the fleet, draws a burst, drains (refusing submissions) and resumes', async () => {
    const page = await context.newPage();
    const outside: string[] = [];
    const origin = new URL(s.apiUrl!).origin;
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      // The deliberately wrong token below is answered with 401; nothing else may fail.
      if (m.type() === 'error' && !/status of 401/.test(m.text())) consoleErrors.push(m.text());
    });

    await page.goto(`${s.apiUrl}/console`);
    // A wrong token is refused and asked for again; the right one connects.
    await page.getByLabel('Token', { exact: true }).fill('not-the-token');
    await page.getByRole('button', { name: 'Connect' }).click();
    await expect.poll(() => page.locator('#token-error').textContent()).toMatch(/not valid/);
    await page.getByLabel('Token', { exact: true }).fill(ADMIN);
    await page.keyboard.press('Enter');

    await expect.poll(() => page.locator('#mode').textContent(), { timeout: 30_000 }).toBe('open');
    await expect
      .poll(() => page.locator('#tenants tbody tr').count(), { timeout: 30_000 })
      .toBeGreaterThanOrEqual(3);
    await expect(page.locator('#tenants tbody').textContent()).resolves.toContain(`acme-${s.id}`);

    // A burst of runs from every tenant.
    const burst = Object.values(keys).flatMap((token) =>
      Array.from({ length: 12 }, () =>
        s.call('POST', '/v1/runs', {
          token,
          body: { agent: 'synthetic', input: { steps: 2, stepMs: 300, tokensPerStep: 200 } },
        }),
      ),
    );
    const replies = await Promise.all(burst);
    expect(replies.map((r) => r.status)).toEqual(Array(replies.length).fill(202));
    await expect
      .poll(() => nonZero(page, 'chart-admissions'), { timeout: 60_000, interval: 1000 })
      .toBeGreaterThan(0);
    await expect.poll(() => inkedPixels(page, 'chart-admissions'), { timeout: 10_000 }).toBeGreaterThan(20);

    // The tenant table sorts by a column header, from the keyboard.
    await page.locator('#tenants th[data-key="weight"] button').focus();
    await page.keyboard.press('Enter');
    await expect(page.locator('#tenants th[data-key="weight"]').getAttribute('aria-sort')).resolves.toBe(
      'descending',
    );
    await expect
      .poll(() => page.locator('#tenants tbody tr').first().getAttribute('data-tenant'))
      .toBe(`acme-${s.id}`);

    // Explain a run that is still known to the fleet.
    const runId = replies.at(-1)!.body.runId as string;
    await page.getByLabel('Run id').fill(runId);
    await page.getByRole('button', { name: 'Explain' }).click();
    await expect.poll(() => page.locator('#explain-result').textContent()).toMatch(/Status/);

    // Drain (refuse), confirmed in the dialog: the mode shown changes and a submission is refused.
    await page.getByRole('button', { name: 'Drain (refuse)' }).click();
    await page.locator('#confirm-ok').click();
    await expect
      .poll(() => page.locator('#mode').textContent(), { timeout: 30_000 })
      .toMatch(/^(draining|drained)$/);
    await expect(page.locator('#drain-progress').isVisible()).resolves.toBe(true);
    const refused = await s.call('POST', '/v1/runs', {
      token: keys.globex!,
      body: { agent: 'synthetic', input: { steps: 1 } },
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('draining');
    await expect.poll(() => page.locator('#mode').textContent(), { timeout: 60_000 }).toBe('drained');
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-drained.png'), fullPage: true });

    // Resume: cancelling the dialog changes nothing; confirming opens the fleet again.
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('#confirm-cancel').click();
    const still = await s.call('GET', '/v1/admin/scheduler');
    expect(still.body.mode).toBe('drained');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('#confirm-ok').click();
    await expect.poll(() => page.locator('#mode').textContent(), { timeout: 30_000 }).toBe('open');
    const accepted = await s.call('POST', '/v1/runs', {
      token: keys.globex!,
      body: { agent: 'synthetic', input: { steps: 1 } },
    });
    expect(accepted.status).toBe(202);

    // A phone-sized screen still shows the fleet without sideways scrolling of the page.
    await page.setViewportSize({ width: 390, height: 844 });
    // (The charts follow the width after a short debounce.)
    await expect
      .poll(() => page.evaluate('document.documentElement.scrollWidth - window.innerWidth'), {
        timeout: 5000,
      })
      .toBeLessThanOrEqual(1);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await expect
      .poll(() => page.locator('#chart-admissions canvas').evaluate((c: any) => c.clientWidth as number))
      .toBeGreaterThan(400);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console.png'), fullPage: true });

    expect(outside, 'requests that left the machine').toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('serves its assets from this server with a CSP that allows nothing else', async () => {
    const page = await s.call('GET', '/console', { token: '' });
    expect(page.status).toBe(200);
    const html = String(page.body);
    expect(html).not.toMatch(/https?:\/\//);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).toMatch(/connect-src 'self'/);
    for (const asset of ['app.js', 'app.css', 'uplot.js', 'uplot.css']) {
      const r = await s.call('GET', `/console/assets/${asset}`, { token: '' });
      expect(r.status, asset).toBe(200);
      expect(String(r.body), asset).not.toMatch(/(src|href)=["']?https?:/);
    }
    expect((await s.call('GET', '/console/assets/nope.js', { token: '' })).status).toBe(404);
    // The data is admin-only.
    expect((await s.call('GET', '/v1/admin/console', { token: '' })).status).toBe(401);
    expect((await s.call('GET', '/v1/admin/console', { token: keys.acme! })).status).toBe(403);
    expect((await s.call('GET', '/v1/admin/console?since=x')).status).toBe(400);
    const st = await s.call('GET', '/v1/admin/console');
    expect(st.status).toBe(200);
    expect(st.body.samples.length).toBeGreaterThan(1);
    const since = st.body.samples.at(-1).seq;
    const later = await s.call('GET', `/v1/admin/console?since=${since}`);
    expect(later.body.samples.every((x: { seq: number }) => x.seq > since)).toBe(true);
  });
});
