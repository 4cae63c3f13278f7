import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolveTemporalCli } from '../../src/infra/temporal-cli';

/**
 * Runs the real Temporal CLI against `address`. Asynchronously: the calling process may host the
 * worker that must answer the CLI's queries.
 */
export async function temporalCli(address: string, args: string[]): Promise<string> {
  const cli = resolveTemporalCli(process.env.TEMPORAL_CLI_PATH);
  if (cli.kind !== 'path') throw new Error(cli.reason);
  const { stdout } = await promisify(execFile)(cli.path, [...args, '--address', address], {
    encoding: 'utf8',
  });
  return stdout;
}

const runIdArgs = (runId: string | undefined) => (runId ? ['--run-id', runId] : []);

/**
 * Loses the scheduler as an operator would: `temporal workflow terminate`. With `runId`, only that run
 * (so a retry after a timed-out call that did apply fails instead of terminating a newer chain).
 */
export function terminateScheduler(address: string, workflowId: string, runId?: string): Promise<string> {
  return temporalCli(address, [
    'workflow',
    'terminate',
    '--workflow-id',
    workflowId,
    ...runIdArgs(runId),
    '--reason',
    'drill',
  ]);
}

/**
 * `temporal workflow reset --type FirstWorkflowTask`: back to the first workflow task of the chain's
 * current run, so everything the chain learnt since (admissions, leases, charges) is forgotten.
 */
export function resetScheduler(address: string, workflowId: string, runId?: string): Promise<string> {
  return temporalCli(address, [
    'workflow',
    'reset',
    '--workflow-id',
    workflowId,
    ...runIdArgs(runId),
    '--type',
    'FirstWorkflowTask',
    '--reason',
    'drill',
    '--yes',
  ]);
}

/** What `describe()` of the scheduler's handle answers that matters here. */
export interface ChainDescription {
  status: { name: string };
  runId?: string | undefined;
}

/**
 * Polls `describe` until a chain other than `oldRunId` runs; answers the ms it took from `since`.
 * Throws after `timeoutMs` (a new chain must come without any process restarting).
 */
export async function newChainAfter(
  describe: () => Promise<ChainDescription>,
  oldRunId: string,
  since: number,
  timeoutMs = 60_000,
  everyMs = 250,
): Promise<{ ms: number; runId: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await describe().catch(() => undefined);
    if (d?.status.name === 'RUNNING' && d.runId && d.runId !== oldRunId)
      return { ms: Date.now() - since, runId: d.runId };
    if (Date.now() > deadline)
      throw new Error(`no new scheduler chain within ${timeoutMs} ms of losing ${oldRunId}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
