import { temporalCli } from '../../bench/lib/scheduler-loss';

export { temporalCli };

/** The same, for commands expected to fail: whether it succeeded, and all it printed. */
export async function temporalCliOutcome(
  address: string,
  args: string[],
): Promise<{ ok: boolean; out: string }> {
  try {
    return { ok: true, out: await temporalCli(address, args) };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message?: string };
    return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? e.message ?? ''}` };
  }
}

/**
 * `temporal workflow query --type status -o json`, parsed. A query that meets the scheduler in the
 * middle of a workflow task waits in the server's buffer, which holds one: another one then answers
 * "Workflow is busy" at once, and the CLI exits non-zero. An operator runs it again; so does this.
 */
export async function cliStatus(address: string, workflowId: string): Promise<any> {
  const args = ['workflow', 'query', '--workflow-id', workflowId, '--type', 'status', '-o', 'json'];
  for (let attempt = 1; ; attempt++) {
    try {
      const parsed = JSON.parse(await temporalCli(address, args));
      return parsed.queryResult?.[0] ?? parsed;
    } catch (err) {
      if (attempt >= 20 || !/Workflow is busy/.test(String((err as Error).message))) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
