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

/** The parts of the scheduler's status a held window reads. */
export interface HeldStatus {
  mode: string;
  intake: string;
  queued: { total: number };
  counters: { admitted: number };
}

export interface HeldWindow {
  reads: number;
  ms: number;
  /** Admissions the chain made during the window (anything but 0 is the defect). */
  admitted: number;
  /** Reads that found the chain open, its intake not `hold`, or another chain running. */
  notHeld: number;
  /** Units the chain held at the last read. */
  queued: number;
}

/**
 * Proves absence of admissions on a drained chain over a window on the system's clock: at least
 * `reads` status reads spanning at least `minMs`, each after a describe that finds `chainRunId`
 * still running. Counts, never throws on what it reads: the caller asserts `admitted` and `notHeld`
 * are 0.
 */
export async function heldWindow(
  status: () => Promise<HeldStatus | null | undefined>,
  describe: () => Promise<ChainDescription>,
  chainRunId: string,
  /** `baseAdmitted`: the chain's admitted count the window starts from (0 for a new chain); else its first read. */
  opts: { reads: number; minMs: number; everyMs?: number; baseAdmitted?: number },
): Promise<HeldWindow> {
  const t0 = Date.now();
  let base: number | undefined;
  let reads = 0;
  let notHeld = 0;
  let admitted = 0;
  let queued = 0;
  while (reads < opts.reads || Date.now() - t0 < opts.minMs) {
    const d = await describe().catch(() => undefined);
    const st = await status().catch(() => undefined);
    reads++;
    if (!st || d?.status.name !== 'RUNNING' || d.runId !== chainRunId) notHeld++;
    else {
      if (st.mode === 'open' || st.intake !== 'hold') notHeld++;
      base ??= opts.baseAdmitted ?? st.counters.admitted;
      admitted = Math.max(admitted, st.counters.admitted - base);
      queued = st.queued.total;
    }
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 500));
  }
  return { reads, ms: Date.now() - t0, admitted, notHeld, queued };
}
