import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { startDevServer } from '../../src/infra/dev-server';
import { installRuntime } from '../../src/infra/runtime';
import { workflowInterceptorModules, workflowsPath } from '../../src/fleet/worker';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    workflowBundlePath: string;
  }
}

/**
 * One real Temporal dev server (the CLI's, found or installed by the project's resolver) for the
 * whole integration run, on a free port with in-memory SQLite, and the workflow code bundled once.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  installRuntime();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fairway-it-'));
  const server = await startDevServer({
    cliPath: process.env.TEMPORAL_CLI_PATH,
    port: undefined,
    uiPort: undefined,
    // In-memory SQLite: the suite measures behaviour, and a file's fsyncs halve a 2-core server's throughput.
    dbFile: undefined,
    namespace: 'default',
    // A run that continues-as-new less than this after its own start has its successor held for the
    // rest of it (default 1 s, against tight loops). A production scheduler run lasts thousands of
    // events and never meets the hold; the continue-as-new test's 10-event budget met it on every
    // cycle, so its 100 cycles took 100 s at least. No Fairway code relies on the interval otherwise.
    dynamicConfig: { 'history.workflowIdReuseMinimalInterval': '0s' },
    log: (m) => console.log(`[temporal] ${m}`),
  });
  const code = await suiteBundle();
  const bundlePath = path.join(dir, 'workflows.js');
  writeFileSync(bundlePath, code);
  project.provide('temporalAddress', server.address);
  project.provide('workflowBundlePath', bundlePath);
  return async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}

/**
 * The workflow code, bundled once per vitest process: the integration and storm projects each run
 * this setup (one after the other, before any file starts), and the bundle is the same for both.
 * Kept on globalThis because each project loads this module afresh.
 */
function suiteBundle(): Promise<string> {
  const g = globalThis as { fairwaySuiteBundle?: Promise<string> };
  g.fairwaySuiteBundle ??= bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules,
    logger: quietLogger,
  }).then((b) => b.code);
  return g.fairwaySuiteBundle;
}

const noop = () => {};
const quietLogger = {
  log: noop,
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: (m: string) => console.error(m),
};
