import { NativeConnection, Worker } from '@temporalio/worker';

/**
 * A workflow worker of its own process (so a test can SIGSTOP it) for the workflows folder, with stub
 * scheduler activities: TEMPORAL_ADDRESS, TASK_QUEUE, MAX_CACHED_WORKFLOWS (optional). Prints each activation's jobs and each completion's commands, replays included
 * (`NDE <run> …` lines, test/support/nde/log-activations.ts), then "ready".
 */
async function main(): Promise<void> {
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const cached = process.env.MAX_CACHED_WORKFLOWS;
  const worker = await Worker.create({
    connection,
    taskQueue: process.env.TASK_QUEUE!,
    workflowsPath: require.resolve('../../../src/workflows'),
    ...(cached ? { maxCachedWorkflows: Number(cached) } : {}),
    interceptors: { workflowModules: [require.resolve('./log-activations')] },
    sinks: {
      nde: {
        line: {
          fn: (info: { runId: string }, text: string) =>
            console.log(`${new Date().toISOString()} NDE ${info.runId.slice(-8)} ${text}`),
          callDuringReplay: true,
        },
      },
    },
    activities: {
      notifyAdmissions: async () => [],
      notifyRevoked: async () => {},
      notifyBudgetRefused: async () => {},
      recoverUsage: async () => ({ usage: [], activeRuns: 0 }),
      // The report log's long poll, finding nothing new: the scheduler keeps one pull in flight.
      pullReports: async ({ after }: { after: number | null }) => {
        await new Promise((r) => setTimeout(r, 250 + Math.random() * 750));
        return { reports: [], after: after ?? 0 };
      },
    },
  });
  console.log('ready');
  await worker.run();
}
void main();
