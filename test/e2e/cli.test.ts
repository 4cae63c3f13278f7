import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const root = path.resolve(__dirname, '..', '..');
const FAST = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' };

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `fairway …` as an operator runs it: a child process with only the documented variables set. `npx`
 * (the way docs/operating.md says to run it) for the first status and the first failing exit code; the
 * package's own bin (`bin/fairway.cjs`, what npx resolves `fairway` to) for the rest: npx reads the
 * whole installed dependency tree first, about a CPU-second a call on a 2-core machine.
 */
function fairway(args: string[], env: Record<string, string>, via: 'npx' | 'bin' = 'bin'): Promise<Result> {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== 'ADMIN_TOKEN' && !k.startsWith('FAIRWAY_')) clean[k] = v;
  }
  const [file, argv] =
    via === 'npx'
      ? ['npx', ['fairway', ...args]]
      : [process.execPath, [path.join(root, 'bin', 'fairway.cjs'), ...args]];
  return new Promise((resolve) => {
    execFile(
      file,
      argv,
      { cwd: root, env: { ...clean, ...env }, encoding: 'utf8', timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('npx fairway against a running stack', () => {
  let s: TestStack;
  let env: Record<string, string>;
  let key: string;
  let tenant: string;

  beforeAll(async () => {
    s = await startTestStack({ FLEET_CONCURRENCY: '4', ...FAST });
    tenant = `cli-${s.id}`;
    key = await s.tenant(tenant, { weight: 2 });
    env = { FAIRWAY_URL: s.apiUrl!, FAIRWAY_ADMIN_TOKEN: ADMIN };
  });
  afterAll(async () => {
    await s?.close();
  });

  it('status prints the scheduler as a table, and as JSON with --json', async () => {
    const r = await fairway(['status'], env, 'npx');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^mode\s+open \(intake open\)$/m);
    expect(r.stdout).toMatch(/^in flight\s+0 \/ 4 /m);
    const j = await fairway(['status', '--json'], { FAIRWAY_URL: s.apiUrl!, ADMIN_TOKEN: ADMIN });
    expect(j.code).toBe(0);
    const parsed = JSON.parse(j.stdout);
    expect(parsed).toMatchObject({ mode: 'open', intake: 'open', config: { concurrency: 4 } });
  });

  it('drain refuses submissions; drain --hold holds them; resume opens again', async () => {
    const d = await fairway(['drain'], env);
    expect(d.stderr).toBe('');
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(/Draining: intake refuse/);
    const refused = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 1 } },
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('draining');
    const st = await fairway(['status', '--json'], env);
    expect(JSON.parse(st.stdout)).toMatchObject({ mode: 'drained', intake: 'refuse' });

    const h = await fairway(['drain', '--hold', '--json'], env);
    expect(h.code).toBe(0);
    expect(JSON.parse(h.stdout)).toMatchObject({ intake: 'hold' });
    const held = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 1, stepMs: 10, tokensPerStep: 10 } },
    });
    expect(held.status).toBe(202);

    // The held run waits on the drain; explain says so.
    const ex = await fairway(['explain', held.body.runId], env);
    expect(ex.code).toBe(0);
    expect(ex.stdout).toMatch(/^waiting on\s+draining: /m);
    expect(ex.stdout).toMatch(/^position\s+1 in the standard lane$/m);

    const r = await fairway(['resume'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Resumed: mode open, intake open/);
    const done = await waitFor(
      () => s.call('GET', `/v1/runs/${held.body.runId}`),
      (v) => v.body.status === 'completed',
      60_000,
    );
    expect(done.body.status).toBe('completed');
  });

  it('tenants and watch read the sampled console state', async () => {
    const t = await fairway(['tenants'], env);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/^TENANT\s+WEIGHT/);
    expect(t.stdout).toMatch(new RegExp(`^${tenant}\\s+2\\s`, 'm'));
    const w = await fairway(['watch', '--count', '2', '--interval', '1'], env);
    expect(w.code).toBe(0);
    const lines = w.stdout.trim().split('\n');
    expect(lines).toHaveLength(2); // not a terminal: one plain line per refresh
    expect(lines[0]).toMatch(
      /mode=(open|draining|drained) intake=(open|refuse|hold) inFlight=\d+\/4 queued=\d+/,
    );
  });

  it('fails clearly: bad token 3, unknown run 4, usage 2, unreachable 1', async () => {
    const bad = await fairway(['status'], { FAIRWAY_URL: s.apiUrl!, FAIRWAY_ADMIN_TOKEN: 'wrong' }, 'npx');
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/refused the token/);
    const none = await fairway(['status'], { FAIRWAY_URL: s.apiUrl! });
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/FAIRWAY_ADMIN_TOKEN/);
    const missing = await fairway(['explain', 'run-nope'], env);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/not_found/);
    expect((await fairway(['frobnicate'], env)).code).toBe(2);
    expect((await fairway(['explain'], env)).code).toBe(2);
    expect((await fairway(['status', '--hold'], env)).code).toBe(2);
    const down = await fairway(['status'], { FAIRWAY_URL: 'http://127.0.0.1:9', FAIRWAY_ADMIN_TOKEN: ADMIN });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/Cannot reach the Fairway API/);
  });
});
