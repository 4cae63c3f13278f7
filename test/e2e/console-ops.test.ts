import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/api/crypto/keys';
import type { DevServer } from '../../src/infra/dev-server';
import { ADMIN, startTestStack } from '../support/stack';
import type { TestStack } from '../support/stack';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  FAST,
  SCREENSHOT_DIR,
  skipBrowser,
  startDevServerWithUi,
} from '../support/chromium';

/**
 * The operator's day two, in the console: what failed and why, the run in the Temporal Web UI, and a
 * gate approved from the inbox with a tenant's approver key, which the decision records. Its own dev
 * server, with the Web UI the console links to (the suite's shared one runs headless).
 */
describe.skipIf(skipBrowser)('the console answers "what failed" and "what waits for me"', () => {
  let dev: DevServer;
  let uiUrl: string;
  let s: TestStack;
  let browser: Browser;
  let tenant: string;
  let key: string;
  let approverKey: string;

  beforeAll(async () => {
    ({ dev, uiUrl } = await startDevServerWithUi());
    s = await startTestStack({ TEMPORAL_ADDRESS: dev.address, TEMPORAL_UI_URL: uiUrl, ...FAST });
    tenant = `ops-${s.id}`;
    key = await s.tenant(tenant);
    const approver = await s.call('POST', `/v1/admin/tenants/${tenant}/approver-key`);
    expect(approver.status).toBe(201);
    approverKey = approver.body.approverKey as string;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS, '--disable-quic'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await dev?.stop();
  });

  const submit = async (body: unknown) => {
    const r = await s.call('POST', '/v1/runs', { token: key, body });
    expect(r.status).toBe(202);
    return r.body.runId as string;
  };
  const statusOf = async (runId: string) => (await s.call('GET', `/v1/runs/${runId}`)).body.status as string;
  const signIn = async (page: Page, token: string) => {
    await page.getByLabel('Token', { exact: true }).fill(token);
    await page.keyboard.press('Enter');
  };

  it('finds a failed run, opens it and its workflow in Temporal, and approves a gate from the inbox', async () => {
    const failed = await submit({
      agent: 'synthetic',
      input: { steps: 3, tokensPerStep: 50, failAtStep: 2 },
    });
    const gated = await submit({ agent: 'triage', input: { incident: 'disk full on db-2' } });
    await expect.poll(() => statusOf(failed), { timeout: 20_000 }).toBe('failed');
    await expect.poll(() => statusOf(gated), { timeout: 20_000 }).toBe('awaiting_approval');

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      // Signing in asks what the key may do: an approver key is refused (403) the admin's and tenant's reads.
      if (m.type() === 'error' && !/status of 403/.test(m.text())) consoleErrors.push(m.text());
    });
    await page.goto(`${s.apiUrl}/console`);
    await signIn(page, ADMIN);
    await expect.poll(() => page.locator('#whoami').textContent()).toMatch(/admin token/);

    // Runs, filtered on Temporal's visibility by agent (and, through the API, by key and time).
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.getByLabel('Agent').fill('triage');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(() => page.locator('#runs tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.run)))
      .toEqual([gated]);
    const ids = async (q: string) =>
      ((await s.call('GET', `/v1/runs?${q}`, { token: key })).body.items as { runId: string }[]).map(
        (r) => r.runId,
      );
    expect(await ids('agent=synthetic&status=failed')).toEqual([failed]);
    expect(
      await ids(`createdAfter=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`),
    ).toEqual([]);
    expect((await ids('createdAfter=2020-01-01T00:00:00Z')).sort()).toEqual([failed, gated].sort());

    // Failures: the run, with its error.
    await page.getByRole('link', { name: 'Failures' }).click();
    const row = page.locator(`#failures tr[data-run="${failed}"]`);
    await row.waitFor({ timeout: 15_000 });
    await expect(row.locator('td.err').textContent()).resolves.toMatch(/step 2/i);
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-failures.png'), fullPage: true });

    // Its detail: the error, its steps with their tokens, and the link into the Temporal Web UI.
    await row.getByRole('link', { name: failed }).click();
    await page.locator('#run-error').waitFor({ timeout: 15_000 });
    await expect(page.locator('#run-facts').textContent()).resolves.toContain('failed');
    const steps = page.locator('#run-steps tbody tr');
    await expect.poll(() => steps.count(), { timeout: 10_000 }).toBe(2);
    await expect(steps.nth(0).textContent()).resolves.toMatch(/step 1.*ok/s);
    expect(Number((await steps.nth(0).locator('td.num').textContent())?.replace(/,/g, ''))).toBeGreaterThan(
      0,
    );
    await expect(steps.nth(1).textContent()).resolves.toMatch(/failed/);
    const link = page.locator('#temporal-link');
    expect(await link.getAttribute('href')).toBe(`${uiUrl}/namespaces/default/workflows/${failed}`);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-run.png'), fullPage: true });
    const [ui] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await ui.getByText(failed).first().waitFor({ timeout: 20_000 });
    await expect(ui.getByText('runWorkflow').first().isVisible()).resolves.toBe(true);
    await ui.close();

    // The inbox, signed in with the tenant's approver key: the proposal, then the approval.
    await page.getByRole('button', { name: 'Change token' }).click();
    await signIn(page, approverKey);
    await expect.poll(() => page.locator('#whoami').textContent()).toMatch(/approver key/);
    await page.getByRole('link', { name: /Approvals/ }).click();
    const card = page.locator(`article.approval[data-run="${gated}"]`);
    await card.waitFor({ timeout: 15_000 });
    await expect(card.locator('pre.json').textContent()).resolves.toContain('disk full on db-2');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-approvals.png'), fullPage: true });
    await card.getByRole('button', { name: 'Approve' }).click();
    await expect(page.locator('#confirm-text').textContent()).resolves.toMatch(/approver key/);
    await page.locator('#confirm-ok').click();
    // The decision records the key that made it: its id, never the key.
    const keyId = `approver:${tenant}#${hashApiKey(approverKey).slice(0, 12)}`;
    await expect
      .poll(() => card.locator('.decided').textContent(), { timeout: 15_000 })
      .toContain(`approved by ${keyId} at `);
    const view = (await s.call('GET', `/v1/runs/${gated}`)).body;
    expect(view.gate).toMatchObject({ decision: 'approve', decidedBy: keyId });
    await expect.poll(() => statusOf(gated), { timeout: 20_000 }).toBe('completed');
    expect(consoleErrors).toEqual([]);
  });

  it("shows a queued keyed run's fairness key and its place among its tenant's keys", async () => {
    const app = `app-${s.id}`;
    const token = await s.tenant(app, { maxInFlight: 1 });
    const run = async (fairnessKey: string) => {
      const r = await s.call('POST', '/v1/runs', {
        token,
        body: { agent: 'synthetic', input: { steps: 1, stepMs: 60_000, tokensPerStep: 10 }, fairnessKey },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      return r.body.runId as string;
    };
    // One whale run holds the tenant's one slot; two more of it and two of user-1 wait behind it.
    const whale = [await run('whale')];
    await expect.poll(() => statusOf(whale[0]!), { timeout: 20_000 }).toBe('running');
    whale.push(await run('whale'), await run('whale'));
    const mine = [await run('user-1'), await run('user-1')];
    const view = (await s.call('GET', `/v1/runs/${mine[1]}`, { token })).body;
    expect(view, JSON.stringify(view)).toMatchObject({ status: 'queued', fairnessKey: 'user-1' });
    const k = view.waitingOn.keyPosition;
    expect(k).toMatchObject({ keysQueued: 2, unitsAheadInKey: 1 });
    expect(k.unitsAheadInTenant).toBeGreaterThanOrEqual(1);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${s.apiUrl}/console#/runs/${mine[1]}`);
    await signIn(page, token);
    const facts = page.locator('#run-facts');
    await expect.poll(() => facts.textContent(), { timeout: 15_000 }).toContain('Among its keys');
    const text = (await facts.textContent()) ?? '';
    expect(text).toMatch(/Fairness key\s*user-1/);
    expect(text).toContain(
      `${k.keysAhead} of 2 keys ahead; ${k.unitsAheadInTenant} of the tenant's runs ahead, 1 of its own key`,
    );
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-run-key.png'), fullPage: true });
    // The running whale run's page names its key and no place (it is not queued).
    await page.goto(`${s.apiUrl}/console#/runs/${whale[0]}`);
    await expect.poll(() => facts.textContent(), { timeout: 15_000 }).toMatch(/Fairness key\s*whale/);
    expect(await facts.textContent()).not.toContain('Among its keys');
    await page.close();
    for (const id of [...whale, ...mine]) await s.call('POST', `/v1/runs/${id}/cancel`, { token });
  });
});
