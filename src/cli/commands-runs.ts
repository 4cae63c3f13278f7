import type { RunListItem, RunStatus, RunView } from '../contract/fleet-port';
import type { Priority } from '../scheduler/types';
import { CliError, EXIT } from './client';
import type { Ctx, Poll } from './commands';
import { pollUntil, printJson } from './commands';
import { num, pairs, table } from './table';

const TERMINAL: RunStatus[] = ['completed', 'failed', 'cancelled'];
const runPath = (runId: string) => `/v1/runs/${encodeURIComponent(runId)}`;

interface RunPage {
  items: RunListItem[];
  nextCursor: string | null;
}

export interface ListFilter {
  status?: RunStatus | undefined;
  lane?: Priority | undefined;
  tenant?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

function renderRuns(page: RunPage): string {
  if (page.items.length === 0) return 'No runs.';
  const rows = table(page.items, [
    { title: 'RUN', value: (r) => r.runId },
    { title: 'TENANT', value: (r) => r.tenant },
    { title: 'AGENT', value: (r) => r.agent },
    { title: 'LANE', value: (r) => r.priority },
    { title: 'STATUS', value: (r) => r.status },
    { title: 'CREATED', value: (r) => r.createdAt },
  ]);
  return page.nextCursor ? `${rows}\n\nMore: --cursor ${page.nextCursor}` : rows;
}

export async function listRuns({ api, io, json }: Ctx, f: ListFilter): Promise<void> {
  const q = new URLSearchParams();
  if (f.status) q.set('status', f.status);
  if (f.lane) q.set('priority', f.lane);
  if (f.tenant) q.set('tenant', f.tenant);
  if (f.limit) q.set('limit', String(f.limit));
  if (f.cursor) q.set('cursor', f.cursor);
  const page = await api.get<RunPage>(`/v1/runs${q.size ? `?${q}` : ''}`);
  if (json) printJson(io, page);
  else io.out(renderRuns(page));
}

function renderRun(r: RunView): string {
  const w = r.waitingOn;
  return pairs([
    ['run', r.runId],
    ['tenant', r.tenant],
    ['agent', r.agent],
    ['lane', r.priority],
    ['status', r.status],
    ['created', r.createdAt],
    ['admitted', r.admittedAt ?? '-'],
    ['finished', r.finishedAt ?? '-'],
    ['tokens', num(r.usage.tokens)],
    ['waiting on', w ? `${w.code}: ${w.message}` : '-'],
    ['batch', r.batchId ?? '-'],
    ['fairness key', r.fairnessKey ?? w?.fairnessKey ?? "- (the tenant's default)"],
    ['tool calls', String(r.toolCalls.length)],
    ['error', r.error ? `${r.error.code}: ${r.error.message}` : '-'],
    ['result', r.result === null || r.result === undefined ? '-' : JSON.stringify(r.result)],
  ]);
}

export async function getRun({ api, io, json }: Ctx, runId: string): Promise<void> {
  const run = await api.get<RunView>(runPath(runId));
  if (json) printJson(io, run);
  else io.out(renderRun(run));
}

export async function submitRun(
  { api, io, json }: Ctx,
  agent: string,
  input: string | undefined,
  o: {
    lane?: Priority | undefined;
    key?: string | undefined;
    estimatedTokens?: number | undefined;
    fairnessKey?: string | undefined;
  },
): Promise<void> {
  let parsed: unknown = {};
  if (input !== undefined) {
    try {
      parsed = JSON.parse(input);
    } catch (err) {
      throw new CliError(`The input must be JSON: ${(err as Error).message}`, EXIT.usage);
    }
  }
  const body = {
    agent,
    input: parsed,
    ...(o.lane ? { priority: o.lane } : {}),
    ...(o.key ? { idempotencyKey: o.key } : {}),
    ...(o.estimatedTokens ? { estimatedTokens: o.estimatedTokens } : {}),
    ...(o.fairnessKey !== undefined ? { fairnessKey: o.fairnessKey } : {}),
  };
  const answer = await api.post<{ runId: string; status: RunStatus }>('/v1/runs', body);
  if (json) printJson(io, answer);
  else io.out(`${answer.runId}  ${answer.status}`);
}

export async function cancelRun({ api, io, json }: Ctx, runId: string): Promise<void> {
  const answer = await api.post<{ runId: string }>(`${runPath(runId)}/cancel`);
  if (json) printJson(io, answer);
  else io.out(`Cancel requested for ${answer.runId}.`);
}

/**
 * Waits until the run reaches one of `until`, or finishes. Exits 0 when it reached a status asked
 * for (without `until`: completed), 5 when it finished otherwise.
 */
export async function waitRun(
  { api, io, json }: Ctx,
  runId: string,
  o: { until: RunStatus[] | undefined } & Poll,
): Promise<void> {
  const until = o.until ?? TERMINAL;
  const run = await pollUntil(
    io,
    o,
    () => api.get<RunView>(runPath(runId)),
    (r) => until.includes(r.status) || TERMINAL.includes(r.status),
    `run ${runId} to be ${until.join(' or ')}`,
  );
  if (json) printJson(io, run);
  else io.out(renderRun(run));
  const wanted = o.until ? o.until.includes(run.status) : run.status === 'completed';
  if (!wanted) {
    throw new CliError(
      `Run ${run.runId} ended ${run.status}${run.error ? ` (${run.error.code}: ${run.error.message})` : ''}.`,
      EXIT.runFailed,
    );
  }
}

export async function decide(
  { api, io, json }: Ctx,
  runId: string,
  decision: 'approve' | 'reject',
  o: { gate?: number; note?: string },
): Promise<void> {
  const answer = await api.post<{ runId: string; gateId?: number; decision: string }>(
    `${runPath(runId)}/${decision}`,
    {
      ...(o.gate !== undefined ? { gateId: o.gate } : {}),
      ...(o.note !== undefined ? { note: o.note } : {}),
    },
  );
  if (json) printJson(io, answer);
  else
    io.out(
      `${answer.runId} ${answer.decision}${answer.gateId !== undefined ? ` at gate ${answer.gateId}` : ''}.`,
    );
}
