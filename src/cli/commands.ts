import type { RunView } from '../contract/fleet-port';
import type { ConsoleState } from '../api/console/sampler';
import type { SchedulerStatus } from '../scheduler/types';
import type { ApiClient } from './client';
import { CliError, EXIT } from './client';
import { renderStatus, renderTenants, renderWatch, watchLine } from './render';
import { pairs, num } from './table';

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  isTty: boolean;
  /** Resolves after ms, or early when the command should stop (Ctrl-C). */
  sleep: (ms: number) => Promise<boolean>;
}

export interface Options {
  json: boolean;
  hold: boolean;
  interval: number;
  count: number | undefined;
}

const json = (io: Io, v: unknown) => io.out(JSON.stringify(v, null, 2));

export async function status(api: ApiClient, io: Io, o: Options): Promise<void> {
  const s = await api.get<SchedulerStatus>('/v1/admin/scheduler');
  if (o.json) json(io, s);
  else io.out(renderStatus(s));
}

export async function tenants(api: ApiClient, io: Io, o: Options): Promise<void> {
  const st = await api.get<ConsoleState>('/v1/admin/console?since=999999999999999');
  if (o.json) json(io, st.tenants);
  else io.out(renderTenants(st.tenants, st.shareWindowMs));
}

export async function explain(api: ApiClient, io: Io, o: Options, runId: string | undefined): Promise<void> {
  if (!runId) throw new CliError('Usage: fairway explain <runId>', EXIT.usage);
  const run = await api.get<RunView>(`/v1/runs/${encodeURIComponent(runId)}`);
  if (o.json) return json(io, { runId: run.runId, status: run.status, waitingOn: run.waitingOn });
  const w = run.waitingOn;
  io.out(
    pairs([
      ['run', run.runId],
      ['tenant', run.tenant],
      ['status', run.status],
      ['lane', run.priority],
      [
        'waiting on',
        w ? `${w.code}: ${w.message}` : run.status === 'queued' ? '- (admission imminent)' : '-',
      ],
      ['position', w?.position ? `${num(w.position)} in the ${w.lane} lane` : '-'],
    ]),
  );
}

export async function drain(api: ApiClient, io: Io, o: Options): Promise<void> {
  const intake = o.hold ? 'hold' : 'refuse';
  const s = await api.post<SchedulerStatus>('/v1/admin/drain', { intake });
  if (o.json) return json(io, s);
  io.out(
    `Draining: intake ${s.intake} (${intake === 'hold' ? 'new runs are accepted and held' : 'new runs are refused with 503'}). ` +
      `Mode ${s.mode}, ${num(s.inFlight)} in flight. \`fairway watch\` follows it; \`fairway resume\` undoes it.`,
  );
}

export async function resume(api: ApiClient, io: Io, o: Options): Promise<void> {
  const s = await api.post<SchedulerStatus>('/v1/admin/resume');
  if (o.json) return json(io, s);
  io.out(`Resumed: mode ${s.mode}, intake ${s.intake}, ${num(s.queued.total)} queued.`);
}

export async function watch(api: ApiClient, io: Io, o: Options, url: string): Promise<void> {
  for (let i = 0; o.count === undefined || i < o.count; i++) {
    if (i > 0 && !(await io.sleep(o.interval * 1000))) return;
    const st = await api.get<ConsoleState>('/v1/admin/console');
    if (o.json)
      io.out(JSON.stringify({ at: st.at, status: st.status, tenants: st.tenants, last: st.samples.at(-1) }));
    else if (io.isTty)
      io.out(`\x1b[2J\x1b[H${renderWatch(st, url)}\n\n(every ${o.interval}s; Ctrl-C to stop)`);
    else io.out(watchLine(st));
  }
}
