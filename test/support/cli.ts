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

/** `temporal workflow query --type status -o json`, parsed. */
export async function cliStatus(address: string, workflowId: string): Promise<any> {
  const out = await temporalCli(address, [
    'workflow',
    'query',
    '--workflow-id',
    workflowId,
    '--type',
    'status',
    '-o',
    'json',
  ]);
  const parsed = JSON.parse(out);
  return parsed.queryResult?.[0] ?? parsed;
}
