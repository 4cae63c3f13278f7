import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import { AGENT_NAMES } from '../../../src/agents/catalog';
import { loadConfig } from '../../../src/config';
import { createToolActivities, identityOf } from '../../../src/activities/tool-activities';
import { IDENTITY_SALT_FILE, toolIdentitySalt } from '../../../src/fleet/identity-salt';
import { AGENT_TOOLS, mayCall, toolTaskQueue } from '../../../src/contract/tool-registry';

const SALT = 'deployment-salt-for-tests-0123456789';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const store = () => {
  const dir = mkdtempSync(join(tmpdir(), 'fairway-tools-'));
  dirs.push(dir);
  return openSqliteEffectStore(join(dir, 'effects.db'));
};

describe('tool registry', () => {
  it('declares tools for every built-in agent, and nothing for an inherited name', () => {
    expect(Object.keys(AGENT_TOOLS).sort()).toEqual([...AGENT_NAMES].sort());
    expect(mayCall('triage', 'pager')).toBe(true);
    expect(mayCall('synthetic', 'pager')).toBe(false);
    expect(mayCall('constructor', 'lookup')).toBe(false);
    expect(toolTaskQueue('fairway', 'pager')).toBe('fairway.tool.pager');
  });

  it('reads each credential and the served tools from config', () => {
    const c = loadConfig({ TOOL_PAGER_CREDENTIAL: 'p-secret', WORKER_TOOLS: 'pager, scanner' });
    expect(c.tools.credentials).toEqual({ pager: 'p-secret' });
    expect(c.tools.serve).toEqual(['pager', 'scanner']);
    expect(loadConfig({ WORKER_TOOLS: '' }).tools.serve).toEqual([]);
    expect(() => loadConfig({ WORKER_TOOLS: 'pager,shell' })).toThrow(/WORKER_TOOLS/);
  });
});

describe('tool activities', () => {
  it('registers only the tools asked for, and answers with an identity that is not the credential', async () => {
    const effects = store();
    const acts = createToolActivities(['pager'], {
      credentials: { pager: 'pager-secret-xyz' },
      effects,
      effectSinkUrl: undefined,
      identitySalt: SALT,
    });
    expect(Object.keys(acts)).toEqual(['pager']);
    const r = await acts.pager!({
      tool: 'pager',
      agent: 'triage',
      runId: 'r1',
      key: 'r1:remediation',
      args: {},
    });
    expect(r.identity).toBe(identityOf('pager', 'pager-secret-xyz', SALT));
    expect(JSON.stringify(r)).not.toContain('pager-secret-xyz');
    expect(r.data).toEqual({ paged: true, applied: true });
    // The same key again is not a second page.
    const again = await acts.pager!({
      tool: 'pager',
      agent: 'triage',
      runId: 'r1',
      key: 'r1:remediation',
      args: {},
    });
    expect(again.data).toEqual({ paged: true, applied: false });
    await effects.close();
  });

  it('refuses an agent that did not declare the tool, non-retryably', async () => {
    const effects = store();
    const acts = createToolActivities(['pager'], {
      credentials: { pager: 's' },
      effects,
      effectSinkUrl: undefined,
      identitySalt: SALT,
    });
    await expect(
      acts.pager!({ tool: 'pager', agent: 'synthetic', runId: 'r1', key: 'k', args: {} }),
    ).rejects.toMatchObject({ type: 'ToolNotDeclared', nonRetryable: true });
    expect((await effects.summary()).effects).toBe(0);
    await effects.close();
  });

  it('scans one target (runs begun before audit-scan-chunk-v1) or a chunk of them, with the same findings', async () => {
    const effects = store();
    const acts = createToolActivities(['scanner'], {
      credentials: { scanner: 'scan-secret' },
      effects,
      effectSinkUrl: undefined,
      identitySalt: SALT,
    });
    const call = (args: Record<string, unknown>) =>
      acts.scanner!({ tool: 'scanner', agent: 'audit', runId: 'r1', key: 'r1:scan-0', args });
    const targets = Array.from({ length: 60 }, (_, i) => `host-${i}.example`);
    const one = await Promise.all(targets.map(async (target) => (await call({ target })).data));
    for (const f of one)
      expect(f).toMatchObject({
        target: expect.any(String),
        finding: expect.stringMatching(/^(clean|issue)$/),
      });
    // Some issues and some clean among 60: the finding depends on the target.
    expect(new Set(one.map((f) => f.finding)).size).toBe(2);
    const chunk = (await call({ targets: targets.slice(0, 4) })).data;
    expect(chunk).toEqual({ findings: one.slice(0, 4) });
    // At most 50 targets a call (an audit item's maximum): the 61st, over-long one is never read.
    const all = (await call({ targets: [...targets, 'x'.repeat(600)] })).data as { findings: unknown[] };
    expect(all.findings).toEqual(one.slice(0, 50));
    await effects.close();
  });

  it('will not serve a tool without its credential', () => {
    const effects = store();
    expect(() =>
      createToolActivities(['lookup'], {
        credentials: {},
        effects,
        effectSinkUrl: undefined,
        identitySalt: SALT,
      }),
    ).toThrow(/no credential/);
    void effects.close();
  });
});

describe('tool identity', () => {
  it('is an HMAC of the credential under the deployment salt, not its plain SHA-256', async () => {
    const id = identityOf('pager', 'pager-secret-xyz', SALT);
    expect(id).toMatch(/^tool:pager#[0-9a-f]{12}$/);
    const plain = createHash('sha256').update('pager-secret-xyz').digest('hex').slice(0, 12);
    expect(id).not.toContain(plain);
    expect(identityOf('pager', 'pager-secret-xyz', 'another-deployment-salt-0123456789')).not.toBe(id);
    expect(identityOf('pager', 'pager-secret-xyz', SALT)).toBe(id);
  });

  it('keeps a generated salt in DATA_DIR, so every process on the data shows the same identity', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fairway-salt-'));
    dirs.push(dir);
    const first = toolIdentitySalt(undefined, join(dir, 'data'));
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(toolIdentitySalt(undefined, join(dir, 'data'))).toBe(first);
    expect(readFileSync(join(dir, 'data', IDENTITY_SALT_FILE), 'utf8').trim()).toBe(first);
    expect(statSync(join(dir, 'data', IDENTITY_SALT_FILE)).mode & 0o077).toBe(0);
    expect(toolIdentitySalt('configured-salt', join(dir, 'data'))).toBe('configured-salt');
    expect(loadConfig({ TOOL_IDENTITY_SALT: 'from-env' }).tools.identitySalt).toBe('from-env');
  });
});
