import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEffectSink } from '../../src/standins/effectsink/sink';
import type { RunningSink } from '../../src/standins/effectsink/sink';
import { ADMIN, startTestStack } from '../support/stack';
import type { TestStack } from '../support/stack';

const cliPackage = path.resolve(__dirname, '..', '..', 'cli');
const FAST = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' };
/** The triage agent's tools act with their own credentials; the sink knows them. */
const CRED = {
  lookup: 'cred-lookup-0123456789',
  pager: 'cred-pager-0123456789',
  scanner: 'cred-scanner-0123456789',
};

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Result> {
  return new Promise((resolve) => {
    execFile(file, args, { ...opts, encoding: 'utf8', timeout: 240_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/**
 * The CLI as a user gets it: `npm pack` of cli/ (its prepack builds src/cli), the tarball installed
 * with npm in an empty directory, and the installed `fairway` bin run with a HOME of its own whose
 * ~/.config/fairway/config.json names the stack (no FAIRWAY_* variable is set).
 */
describe('fairway installed from its tarball', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'fairway-cli-install-'));
  const home = path.join(scratch, 'home');
  const project = path.join(scratch, 'project');
  let s: TestStack;
  let sink: RunningSink;
  let env: NodeJS.ProcessEnv;

  const fairway = (...args: string[]) =>
    exec(path.join(project, 'node_modules', '.bin', 'fairway'), args, { cwd: project, env });
  const ok = async (...args: string[]) => {
    const r = await fairway(...args);
    expect(r.code, `fairway ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r.stdout;
  };

  beforeAll(async () => {
    mkdirSync(project, { recursive: true });
    const clean: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (k !== 'ADMIN_TOKEN' && !k.startsWith('FAIRWAY_') && k !== 'XDG_CONFIG_HOME') clean[k] = v;
    }
    const t0 = Date.now();
    const packed = await exec('npm', ['pack', '--pack-destination', scratch], {
      cwd: cliPackage,
      env: clean,
    });
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const installed = await exec(
      'npm',
      ['install', path.join(scratch, tarball!), '--omit=dev', '--no-audit', '--no-fund'],
      { cwd: project, env: clean },
    );
    expect(installed.code, installed.stderr).toBe(0);
    console.log(`npm pack and install: ${Date.now() - t0} ms`);
    expect(
      readdirSync(path.join(project, 'node_modules'))
        .filter((f) => !f.startsWith('.'))
        .sort(),
    ).toEqual(['commander', 'fairway-cli', 'zod']);

    sink = await startEffectSink({ port: 0, host: '127.0.0.1', tools: CRED });
    s = await startTestStack({
      FLEET_CONCURRENCY: '4',
      ...FAST,
      EFFECT_SINK_URL: sink.url,
      TOOL_LOOKUP_CREDENTIAL: CRED.lookup,
      TOOL_PAGER_CREDENTIAL: CRED.pager,
      TOOL_SCANNER_CREDENTIAL: CRED.scanner,
    });
    mkdirSync(path.join(home, '.config', 'fairway'), { recursive: true });
    writeFileSync(
      path.join(home, '.config', 'fairway', 'config.json'),
      JSON.stringify({ default: 'test', profiles: { test: { url: s.apiUrl, token: ADMIN } } }),
    );
    env = { ...clean, HOME: home };
  }, 300_000);
  afterAll(async () => {
    await s?.close();
    await sink?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('shows its help, and a suggestion for a typo', async () => {
    const help = await ok('--help');
    console.log(`$ fairway --help\n${help}`);
    expect(help).toMatch(/^Usage: fairway \[options\] \[command\]/);
    expect(help).toMatch(/^ {2}approvals /m);
    const typo = await fairway('aprovals', 'list');
    console.log(`$ fairway aprovals list  (exit ${typo.code})\n${typo.stderr}`);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      "error: unknown command 'aprovals'\n(Did you mean approvals?)\n(add --help for usage)\n",
    );
    expect(await ok('--version')).toBe('0.1.0\n');
  });

  it('drives a session: tenant, run, gate, drain --wait, resume', async () => {
    const tenant = `pkg-${s.id}`;
    const created = JSON.parse(await ok('tenants', 'create', tenant, '--weight', '2', '--json'));
    expect(created).toMatchObject({ tenant, settings: { weight: 2 } });
    const key: string = created.apiKey;
    expect(key).toMatch(/\S{20,}/);

    const submitted = JSON.parse(
      await ok('runs', 'submit', 'triage', '{"incident":"disk full"}', '--token', key, '--json'),
    );
    const runId: string = submitted.runId;
    const gated = JSON.parse(
      await ok(
        'runs',
        'wait',
        runId,
        '--until',
        'awaiting_approval',
        '--interval',
        '1',
        '--timeout',
        '120',
        '--json',
      ),
    );
    expect(gated.status).toBe('awaiting_approval');
    const inbox = JSON.parse(await ok('approvals', 'list', '--tenant', tenant, '--json'));
    expect(inbox.items.map((r: { runId: string; gateId: number }) => [r.runId, r.gateId])).toEqual([
      [runId, 1],
    ]);
    expect(await ok('approvals', 'approve', runId, '--gate', '1', '--note', 'from the cli')).toBe(
      `${runId} approved at gate 1.\n`,
    );
    const done = await ok('runs', 'wait', runId, '--interval', '1', '--timeout', '120');
    expect(done).toMatch(/^status\s+completed$/m);

    // A run in flight when the drain starts: drain --wait returns once it has finished.
    const slow = JSON.parse(
      await ok(
        'runs',
        'submit',
        'synthetic',
        '{"steps":3,"stepMs":1500,"tokensPerStep":10}',
        '--token',
        key,
        '--json',
      ),
    );
    await ok('runs', 'wait', slow.runId, '--until', 'running', '--interval', '1', '--timeout', '60');
    const drained = await fairway('drain', '--wait', '--interval', '1', '--timeout', '120');
    expect(drained.code, drained.stderr).toBe(0);
    expect(drained.stdout).toBe('Drained: intake refuse, nothing in flight, 0 queued.\n');
    expect(drained.stderr).toMatch(/^draining: 1 in flight$/m);
    expect(JSON.parse(await ok('runs', 'get', slow.runId, '--json')).status).toBe('completed');
    expect(JSON.parse(await ok('status', '--json'))).toMatchObject({ mode: 'drained', inFlight: 0 });

    expect(await ok('resume')).toMatch(/^Resumed: mode open, intake open/);
    const after = await fairway('runs', 'submit', 'synthetic', '{"steps":1}', '--token', key);
    expect(after.code, after.stderr).toBe(0);
  });
});
