import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { RunStatus } from '../contract/fleet-port';
import type { Priority } from '../scheduler/types';
import type { CliConfig } from '../config';
import { apiClient } from './client';
import * as admin from './commands-admin';
import * as fleet from './commands';
import type { Ctx, Io } from './commands';
import { listApprovals } from './commands-approvals';
import * as runs from './commands-runs';
import { addScheduleCommands } from './commands-schedules';
import { addWebhookCommands } from './commands-webhooks';
import { addWorkerCommand } from './commands-worker';
import { resolveSettings } from './settings';

const STATUSES = [
  'queued',
  'running',
  'awaiting_approval',
  'completed',
  'failed',
  'cancelled',
] as const satisfies RunStatus[];
const LANES = ['interactive', 'standard', 'batch'] as const satisfies Priority[];

const HELP_AFTER = `
Settings: --url, --token and --profile; else FAIRWAY_URL (default http://localhost:3000) and
FAIRWAY_ADMIN_TOKEN (or ADMIN_TOKEN); else the profile named by FAIRWAY_PROFILE or the "default"
of ~/.config/fairway/config.json ({"default": "local", "profiles": {"local": {"url": "…", "token": "…"}}};
FAIRWAY_CONFIG names another file). Commands under runs submit and events take a tenant's API key.
Exit codes: 0 ok, 1 API error or unreachable, 2 usage, 3 missing or refused token, 4 not found,
5 the run ended other than asked (runs wait), 6 a wait timed out.`;

function version(): string {
  // src/cli/ and dist/cli/ both sit two levels below the package root.
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

const positiveInt = (v: string): number => {
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('It must be a positive integer.');
  return Number(v);
};
const positiveNumber = (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('It must be a positive number.');
  return n;
};
const statusList = (v: string): RunStatus[] => {
  const list = v.split(',').map((s) => s.trim());
  const bad = list.filter((s) => !(STATUSES as readonly string[]).includes(s));
  if (bad.length) throw new InvalidArgumentError(`Statuses are ${STATUSES.join(', ')}.`);
  return list as RunStatus[];
};

const pollOptions = (c: Command, what: string) =>
  c
    .addOption(
      new Option('--interval <s>', `seconds between polls while ${what}`).default(2).argParser(positiveInt),
    )
    .addOption(
      new Option('--timeout <s>', `give up (exit 6) after this many seconds`).argParser(positiveInt),
    );

/** The `fairway` command tree; each invocation builds its own. */
export function buildProgram(io: Io, env: CliConfig): Command {
  const program = new Command('fairway');
  program
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, '')),
      writeErr: (s) => io.err(s.replace(/\n$/, '')),
    })
    .configureHelp({ showGlobalOptions: true })
    .showSuggestionAfterError(true)
    .showHelpAfterError('(add --help for usage)')
    .description('Operate a Fairway fleet: its scheduler, tenants, runs, approvals, batches and events.')
    .version(version(), '-V, --version')
    .option('--url <url>', 'the API (else the profile, FAIRWAY_URL, http://localhost:3000)')
    .option('--token <token>', 'the admin token or a tenant API key (else the profile, FAIRWAY_ADMIN_TOKEN)')
    .option('--profile <name>', 'a profile of ~/.config/fairway/config.json')
    .option('--json', 'print JSON instead of tables', false)
    .addHelpText('after', HELP_AFTER);

  /** Wraps an action: resolves the settings from the flags, then runs it with its arguments. */
  const act =
    <A extends unknown[]>(fn: (ctx: Ctx, ...args: A) => Promise<void>) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args.at(-1) as Command;
      const o = cmd.optsWithGlobals<{ url?: string; token?: string; profile?: string; json: boolean }>();
      const s = resolveSettings(o, env);
      const ctx: Ctx = { api: apiClient(s.url, s.token), io, json: o.json, url: s.url };
      await fn(ctx, ...(args.slice(0, -1) as A));
    };

  program
    .command('status')
    .description('the scheduler: mode, in flight, queues, governor, counters')
    .action(act(fleet.status));

  program
    .command('explain')
    .description('why a run waits (waitingOn) and its position in its lane')
    .argument('<runId>')
    .action(act((ctx, runId: string) => fleet.explain(ctx, runId)));

  pollOptions(
    program
      .command('drain')
      .description('stop admitting: refuse new runs (503), or with --hold accept and hold them')
      .option('--hold', 'accept new runs and hold them instead of refusing them', false)
      .option('--wait', 'return once nothing is in flight', false),
    'waiting',
  ).action(
    act((ctx, o: { hold: boolean; wait: boolean; interval: number; timeout?: number }) =>
      fleet.drain(ctx, { ...o, timeout: o.timeout }),
    ),
  );

  program.command('resume').description('admit again and open the intake').action(act(fleet.resume));

  program
    .command('watch')
    .description('a live one-screen summary (plain lines when not a terminal)')
    .addOption(new Option('--interval <s>', 'seconds between refreshes').default(2).argParser(positiveInt))
    .addOption(new Option('--count <n>', 'stop after n refreshes').argParser(positiveInt))
    .action(
      act((ctx, o: { interval: number; count?: number }) =>
        fleet.watch(ctx, { interval: o.interval, count: o.count }),
      ),
    );

  const tenantsTable = act(fleet.tenantsTable);
  const tenants = program
    .command('tenants')
    .description('tenants: shares (the default, as `tenants list`), settings, keys, disable/enable, delete')
    .allowExcessArguments(true)
    .action(async (...args: unknown[]) => {
      const cmd = args.at(-1) as Command;
      // A word that names no subcommand gets commander's own "unknown command" and its suggestion.
      if (cmd.args.length > 0) (cmd as unknown as { unknownCommand(): never }).unknownCommand();
      await tenantsTable(...args);
    });
  tenants
    .command('list')
    .description('weight, token share vs entitled share, queued, in flight, budget')
    .action(tenantsTable);
  const settingsOptions = (c: Command) =>
    c
      .addOption(new Option('--weight <w>', 'fair-share weight').argParser(positiveNumber))
      .addOption(new Option('--max-queued <n>', 'runs it may have queued').argParser(positiveInt))
      .addOption(new Option('--max-in-flight <n>', 'runs it may have in flight').argParser(positiveInt))
      .addOption(new Option('--budget <tokens>', 'tokens a period').argParser(positiveInt))
      .addOption(new Option('--period <p>', 'the budget period').choices(['hour', 'day', 'month', 'none']))
      .addOption(new Option('--on-budget-exhausted <mode>', 'fail or park runs').choices(['fail', 'park']))
      .addOption(
        new Option(
          '--key-weight <key=weight>',
          "a fairness key's weight (repeat; replaces the map)",
        ).argParser(admin.keyWeightArg),
      )
      .addOption(
        new Option('--clear-key-weights', 'every fairness key weighs 1 again').conflicts('keyWeight'),
      )
      .action(act((ctx, id: string, o: admin.TenantFlags) => admin.putTenant(ctx, id, o)));
  settingsOptions(
    tenants.command('create').description('create a tenant (prints its API key once)').argument('<tenant>'),
  );
  settingsOptions(tenants.command('update').description("change a tenant's settings").argument('<tenant>'));
  tenants
    .command('get')
    .description("a tenant's settings")
    .argument('<tenant>')
    .action(act((ctx, id: string) => admin.getTenant(ctx, id)));
  tenants
    .command('rotate-key')
    .description('issue a new API key (the old one stops working)')
    .argument('<tenant>')
    .action(act((ctx, id: string) => admin.rotateKey(ctx, id)));
  tenants
    .command('disable')
    .description('refuse its keys (403 tenant_disabled) and hold its queued runs, kept, until enabled')
    .argument('<tenant>')
    .action(act((ctx, id: string) => admin.setTenantDisabled(ctx, id, true)));
  tenants
    .command('enable')
    .description('enable a disabled tenant: its keys work and its queued runs are admitted again')
    .argument('<tenant>')
    .action(act((ctx, id: string) => admin.setTenantDisabled(ctx, id, false)));
  tenants
    .command('delete')
    .description('delete a disabled tenant with no active runs: its keys, triggers, secrets and settings')
    .argument('<tenant>')
    .action(act((ctx, id: string) => admin.deleteTenant(ctx, id)));
  tenants
    .command('approver-key')
    .description('issue its approver key (shown once): only it may then approve or reject its gates')
    .argument('<tenant>')
    .action(act((ctx, id: string) => admin.approverKey(ctx, id)));

  const r = program.command('runs').description('runs: list, get, submit, cancel, wait');
  r.command('list')
    .description('runs, newest first')
    .addOption(new Option('--status <status>').choices(STATUSES))
    .addOption(new Option('--lane <lane>').choices(LANES))
    .option('--tenant <tenant>', 'one tenant (admin token)')
    .addOption(new Option('--limit <n>').argParser(positiveInt))
    .option('--cursor <cursor>', 'the next page (printed under a full page)')
    .action(act((ctx, o: runs.ListFilter) => runs.listRuns(ctx, o)));
  r.command('get')
    .description('a run: status, tokens, waiting on, error, result')
    .argument('<runId>')
    .action(act((ctx, id: string) => runs.getRun(ctx, id)));
  r.command('submit')
    .description("start a run (a tenant's API key as --token)")
    .argument('<agent>')
    .argument('[input]', 'the input as JSON', undefined)
    .addOption(new Option('--lane <lane>').choices(LANES))
    .option('--key <idempotencyKey>', 'an idempotency key')
    .addOption(new Option('--estimated-tokens <n>').argParser(positiveInt))
    .option('--fairness-key <key>', 'who the run is for inside the tenant (an end user)')
    .action(
      act((ctx, agent: string, input: string | undefined, o: Parameters<typeof runs.submitRun>[3]) =>
        runs.submitRun(ctx, agent, input, o),
      ),
    );
  r.command('cancel')
    .description('cancel a run')
    .argument('<runId>')
    .action(act((ctx, id: string) => runs.cancelRun(ctx, id)));
  pollOptions(
    r
      .command('wait')
      .description('wait until a run finishes (exit 0 completed, 5 otherwise) or reaches --until')
      .argument('<runId>')
      .addOption(
        new Option('--until <statuses>', 'comma-separated statuses to wait for').argParser(statusList),
      ),
    'waiting',
  ).action(
    act((ctx, id: string, o: { until?: RunStatus[]; interval: number; timeout?: number }) =>
      runs.waitRun(ctx, id, { until: o.until, interval: o.interval, timeout: o.timeout }),
    ),
  );

  const ap = program.command('approvals').description('runs waiting for a human: list, approve, reject');
  ap.command('list')
    .description('gates awaiting a decision, with the gate id that approve and reject name')
    .option('--tenant <tenant>', 'one tenant (admin token)')
    .addOption(new Option('--limit <n>').argParser(positiveInt))
    .option('--cursor <cursor>', 'the next page (printed under a full page)')
    .action(act((ctx, o: { tenant?: string; limit?: number; cursor?: string }) => listApprovals(ctx, o)));
  for (const decision of ['approve', 'reject'] as const) {
    ap.command(decision)
      .description(`${decision} a run's gate`)
      .argument('<runId>')
      .addOption(
        new Option(
          '--gate <id>',
          "the gate decided (the run's gate.gateId); a gate since decided or replaced is refused (409)",
        ).argParser(positiveInt),
      )
      .option('--note <text>', 'recorded with the decision')
      .action(
        act((ctx, id: string, o: { gate?: number; note?: string }) => runs.decide(ctx, id, decision, o)),
      );
  }

  const b = program.command('batches').description('batches: get, resume');
  b.command('get')
    .description("a batch's counts")
    .argument('<batchId>')
    .action(act((ctx, id: string) => admin.getBatch(ctx, id)));
  b.command('resume')
    .description("drive a batch's unfinished items again")
    .argument('<batchId>')
    .action(act((ctx, id: string) => admin.resumeBatch(ctx, id)));

  const ev = program
    .command('events')
    .description("a tenant's events (its API key as --token): list, get, replay");
  ev.command('list')
    .description('events, newest first')
    .option('--outcome <outcome>', 'only events with this outcome (started, refused, pending, …)')
    .addOption(new Option('--limit <n>').argParser(positiveInt))
    .action(act((ctx, o: { outcome?: string; limit?: number }) => admin.listEvents(ctx, o)));
  ev.command('get')
    .description('one event with its runs (JSON)')
    .argument('<eventId>')
    .action(act((ctx, id: string) => admin.getEvent(ctx, id)));
  ev.command('replay')
    .description('retry the runs an event could not start, and start any newly matching trigger')
    .argument('<eventId>')
    .action(act((ctx, id: string) => admin.replayEvent(ctx, id)));

  addScheduleCommands(program, act);
  addWebhookCommands(program, act);
  addWorkerCommand(program, io);
  return program;
}
