import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import { OVERLAP_POLICIES } from '../contract/schedules';
import type { ScheduleView } from '../contract/schedules';
import { CliError, EXIT } from './client';
import type { Ctx } from './commands';
import { printJson } from './commands';
import { pairs, table } from './table';

/** Wraps a command's action with the resolved settings (program.ts's `act`). */
export type Act = <A extends unknown[]>(
  fn: (ctx: Ctx, ...args: A) => Promise<void>,
) => (...args: unknown[]) => Promise<void>;

interface PutFlags {
  cron?: string;
  every?: number;
  lane?: string;
  overlap?: string;
  paused: boolean;
  estimatedTokens?: number;
}

/** `?tenant=` for the admin token, which names whose schedule it means. */
const pathOf = (name: string, tenant: string | undefined, tail = '') =>
  `/v1/schedules/${encodeURIComponent(name)}${tail}${tenant ? `?tenant=${encodeURIComponent(tenant)}` : ''}`;

const timing = (s: ScheduleView) => (s.cron !== null ? `cron ${s.cron}` : `every ${s.intervalSeconds} s`);
const paused = (s: ScheduleView) => (s.paused === null ? 'running' : `paused (${s.paused})`);

function renderSchedule(s: ScheduleView): string {
  return pairs([
    ['schedule', s.name],
    ['tenant', s.tenant],
    ['id', s.scheduleId],
    ['agent', s.agent],
    ['lane', s.priority],
    ['when', timing(s)],
    ['overlap', s.overlap],
    ['state', paused(s)],
    ['fired', `${s.actionsTaken} (skipped for overlap: ${s.actionsSkippedOverlap})`],
    ['last fired', s.recentActions.at(-1)?.takenAt ?? '-'],
    ['next', s.nextActionTimes.slice(0, 3).join(', ') || '-'],
    ['input', JSON.stringify(s.input)],
  ]);
}

const seconds = (v: string): number => {
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('It must be a positive integer.');
  return Number(v);
};

/** `fairway schedules list|get|put|trigger|delete`. */
export function addScheduleCommands(program: Command, act: Act): void {
  const sc = program
    .command('schedules')
    .description(
      "recurring runs (a tenant's API key as --token; the admin's with --tenant): list, get, put, trigger, delete",
    );
  sc.command('list')
    .description('schedules, by name')
    .option('--tenant <tenant>', 'one tenant (admin token)')
    .action(
      act(async ({ api, io, json }, o: { tenant?: string }) => {
        const q = o.tenant ? `?tenant=${encodeURIComponent(o.tenant)}` : '';
        const { items } = await api.get<{ items: ScheduleView[] }>(`/v1/schedules${q}`);
        if (json) return printJson(io, { items });
        if (items.length === 0) return io.out('No schedules.');
        io.out(
          table(items, [
            { title: 'SCHEDULE', value: (s) => s.name },
            { title: 'TENANT', value: (s) => s.tenant },
            { title: 'AGENT', value: (s) => s.agent },
            { title: 'WHEN', value: timing },
            { title: 'STATE', value: paused },
            { title: 'FIRED', value: (s) => String(s.actionsTaken) },
            { title: 'NEXT', value: (s) => s.nextActionTimes[0] ?? '-' },
          ]),
        );
      }),
    );
  sc.command('get')
    .description('a schedule: timing, state, recent firings, next times')
    .argument('<name>')
    .option('--tenant <tenant>', 'its tenant (admin token)')
    .action(
      act(async ({ api, io, json }, name: string, o: { tenant?: string }) => {
        const s = await api.get<ScheduleView>(pathOf(name, o.tenant));
        if (json) printJson(io, s);
        else io.out(renderSchedule(s));
      }),
    );
  sc.command('put')
    .description('create or replace a schedule (--cron or --every)')
    .argument('<name>')
    .argument('<agent>')
    .argument('[input]', 'the input as JSON', undefined)
    .option('--cron <expr>', 'a cron expression, in UTC ("0 3 * * *")')
    .addOption(new Option('--every <s>', 'fire every this many seconds').argParser(seconds))
    .addOption(new Option('--lane <lane>').choices(['interactive', 'standard', 'batch']))
    .addOption(
      new Option('--overlap <policy>', 'while the last run is still going').choices(OVERLAP_POLICIES),
    )
    .addOption(new Option('--estimated-tokens <n>').argParser(seconds))
    .option('--paused', 'create it paused (it fires only when triggered)', false)
    .action(
      act(async ({ api, io, json }, name: string, agent: string, input: string | undefined, o: PutFlags) => {
        if ((o.cron === undefined) === (o.every === undefined))
          throw new CliError('Give exactly one of --cron and --every.', EXIT.usage);
        let parsed: unknown = {};
        try {
          if (input !== undefined) parsed = JSON.parse(input);
        } catch (err) {
          throw new CliError(`The input must be JSON: ${(err as Error).message}`, EXIT.usage);
        }
        const s = await api.put<ScheduleView>(`/v1/schedules/${encodeURIComponent(name)}`, {
          agent,
          input: parsed,
          ...(o.cron !== undefined ? { cron: o.cron } : { intervalSeconds: o.every }),
          ...(o.lane ? { priority: o.lane } : {}),
          ...(o.overlap ? { overlap: o.overlap } : {}),
          ...(o.estimatedTokens ? { estimatedTokens: o.estimatedTokens } : {}),
          paused: o.paused,
        });
        if (json) printJson(io, s);
        else io.out(renderSchedule(s));
      }),
    );
  sc.command('trigger')
    .description('fire a schedule now (its overlap policy applies)')
    .argument('<name>')
    .option('--tenant <tenant>', 'its tenant (admin token)')
    .action(
      act(async ({ api, io, json }, name: string, o: { tenant?: string }) => {
        const answer = await api.post<{ name: string }>(pathOf(name, o.tenant, '/trigger'));
        if (json) printJson(io, answer);
        else io.out(`Schedule ${answer.name} fired.`);
      }),
    );
  sc.command('delete')
    .description('delete a schedule (its runs stay)')
    .argument('<name>')
    .option('--tenant <tenant>', 'its tenant (admin token)')
    .action(
      act(async ({ api, io, json }, name: string, o: { tenant?: string }) => {
        await api.delete<null>(pathOf(name, o.tenant));
        if (json) printJson(io, { name, deleted: true });
        else io.out(`Schedule ${name} deleted.`);
      }),
    );
}
