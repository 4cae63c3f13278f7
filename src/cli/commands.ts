import type { RunView } from '../contract/fleet-port';
import type { ConsoleState } from '../api/console/sampler';
import type { KeyPosition, SchedulerStatus } from '../scheduler/types';
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

/** What every command gets: the API, the terminal, `--json`, and the API's URL. */
export interface Ctx {
  api: ApiClient;
  io: Io;
  json: boolean;
  url: string;
}

/** How a polling command waits: seconds between polls, and at most this many seconds in all. */
export interface Poll {
  interval: number;
  timeout: number | undefined;
}

export const printJson = (io: Io, v: unknown): void => io.out(JSON.stringify(v, null, 2));

/**
 * Calls `read` every `poll.interval` seconds until `done` holds; returns the last value read.
 * Exits 6 after `poll.timeout` seconds, and 130 when the operator stops it (Ctrl-C).
 */
export async function pollUntil<T>(
  io: Io,
  poll: Poll,
  read: () => Promise<T>,
  done: (v: T) => boolean,
  what: string,
): Promise<T> {
  const deadline = poll.timeout === undefined ? Infinity : Date.now() + poll.timeout * 1000;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() + poll.interval * 1000 > deadline) {
      throw new CliError(`Timed out after ${poll.timeout}s waiting for ${what}.`, EXIT.timeout);
    }
    if (!(await io.sleep(poll.interval * 1000))) throw new CliError(`Stopped waiting for ${what}.`, 130);
  }
}

export async function status({ api, io, json }: Ctx): Promise<void> {
  const s = await api.get<SchedulerStatus>('/v1/admin/scheduler');
  if (json) printJson(io, s);
  else io.out(renderStatus(s));
}

export async function tenantsTable({ api, io, json }: Ctx): Promise<void> {
  const st = await api.get<ConsoleState>('/v1/admin/console?since=999999999999999');
  if (json) printJson(io, st.tenants);
  else io.out(renderTenants(st.tenants, st.shareWindowMs));
}

/** `user-42: 2 of 5 keys ahead, 3 runs of the tenant (1 of its own)`, the bucket when it shares one. */
function keyLine(key: string | undefined, k: KeyPosition): string {
  const name = `${key ?? '(default)'}${k.bucket ? ` (bucket ${k.bucket})` : ''}`;
  return `${name}: ${num(k.keysAhead)} of ${num(k.keysQueued)} keys ahead, ${num(k.unitsAheadInTenant)} runs of the tenant (${num(k.unitsAheadInKey)} of its own)`;
}

export async function explain({ api, io, json }: Ctx, runId: string): Promise<void> {
  const run = await api.get<RunView>(`/v1/runs/${encodeURIComponent(runId)}`);
  if (json) return printJson(io, { runId: run.runId, status: run.status, waitingOn: run.waitingOn });
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
      ...(w?.keyPosition ? ([['key', keyLine(w.fairnessKey, w.keyPosition)]] as [string, string][]) : []),
    ]),
  );
}

export async function drain(ctx: Ctx, o: { hold: boolean; wait: boolean } & Poll): Promise<void> {
  const { api, io, json } = ctx;
  const intake = o.hold ? 'hold' : 'refuse';
  let s = await api.post<SchedulerStatus>('/v1/admin/drain', { intake });
  if (o.wait) {
    let last = -1;
    s = await pollUntil(
      io,
      o,
      async () => {
        const now = await api.get<SchedulerStatus>('/v1/admin/scheduler');
        if (!json && now.mode === 'draining' && now.inFlight !== last) {
          io.err(`draining: ${num(now.inFlight)} in flight`);
          last = now.inFlight;
        }
        if (now.mode === 'open') throw new CliError('The fleet was resumed while draining.', EXIT.api);
        return now;
      },
      (now) => now.mode === 'drained',
      'the drain to finish',
    );
  }
  if (json) return printJson(io, s);
  if (o.wait) {
    io.out(`Drained: intake ${s.intake}, nothing in flight, ${num(s.queued.total)} queued.`);
    return;
  }
  io.out(
    `Draining: intake ${s.intake} (${intake === 'hold' ? 'new runs are accepted and held' : 'new runs are refused with 503'}). ` +
      `Mode ${s.mode}, ${num(s.inFlight)} in flight. \`fairway drain --wait\` or \`fairway watch\` follows it; \`fairway resume\` undoes it.`,
  );
}

export async function resume({ api, io, json }: Ctx): Promise<void> {
  const s = await api.post<SchedulerStatus>('/v1/admin/resume');
  if (json) return printJson(io, s);
  io.out(`Resumed: mode ${s.mode}, intake ${s.intake}, ${num(s.queued.total)} queued.`);
}

export async function watch(
  { api, io, json, url }: Ctx,
  o: { interval: number; count: number | undefined },
): Promise<void> {
  for (let i = 0; o.count === undefined || i < o.count; i++) {
    if (i > 0 && !(await io.sleep(o.interval * 1000))) return;
    const st = await api.get<ConsoleState>('/v1/admin/console');
    if (json)
      io.out(JSON.stringify({ at: st.at, status: st.status, tenants: st.tenants, last: st.samples.at(-1) }));
    else if (io.isTty)
      io.out(`\x1b[2J\x1b[H${renderWatch(st, url)}\n\n(every ${o.interval}s; Ctrl-C to stop)`);
    else io.out(watchLine(st));
  }
}
