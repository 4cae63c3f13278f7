import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/main';

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  body: unknown;
}

/** A stand-in API: each route answers from a queue of bodies (the last one repeats). */
function fakeApi(routes: Record<string, unknown[]>) {
  const seen: Seen[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        auth: req.headers.authorization,
        body: raw ? JSON.parse(raw) : undefined,
      });
      const key = `${req.method} ${req.url!.split('?')[0]}`;
      const queue = routes[key];
      if (!queue) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'not_found', message: `${key} not found` } }));
        return;
      }
      const body = queue.length > 1 ? queue.shift() : queue[0];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  return { server, seen };
}

function terminal() {
  const out: string[] = [];
  const err: string[] = [];
  let sleeps = 0;
  return {
    out,
    err,
    get sleeps() {
      return sleeps;
    },
    io: {
      out: (t: string) => out.push(t),
      err: (t: string) => err.push(t),
      isTty: false,
      sleep: async () => {
        sleeps++;
        return true;
      },
    },
  };
}

const status = (mode: string, inFlight: number) => ({
  mode,
  intake: 'refuse',
  inFlight,
  queued: { total: 0, byPriority: { interactive: 0, standard: 0, batch: 0 } },
});
const runView = (status: string) => ({
  runId: 'run-a-1',
  tenant: 'a',
  agent: 'triage',
  priority: 'standard',
  status,
  createdAt: '2026-01-01T00:00:00.000Z',
  admittedAt: null,
  finishedAt: null,
  usage: { tokens: 12 },
  waitingOn: null,
  result: null,
  error: status === 'failed' ? { code: 'step_failed', message: 'boom' } : null,
  batchId: null,
  toolCalls: [],
});

const tenantView = (keyWeights: Record<string, number> | undefined) => ({
  tenant: 'acme',
  settings: {
    weight: 1,
    maxQueued: 10,
    maxInFlight: 2,
    budget: { tokens: null, period: 'none' },
    ...(keyWeights ? { keyWeights } : {}),
  },
  disabled: false,
  approverKey: false,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('fairway (commander)', () => {
  const api = fakeApi({
    'POST /v1/admin/drain': [status('draining', 2)],
    'GET /v1/admin/scheduler': [status('draining', 2), status('draining', 1), status('drained', 0)],
    'GET /v1/runs/run-a-1': [runView('running'), runView('awaiting_approval'), runView('failed')],
    'POST /v1/runs': [{ runId: 'run-a-9', status: 'queued' }],
    'GET /v1/runs/run-a-2': [
      {
        ...runView('queued'),
        runId: 'run-a-2',
        waitingOn: {
          code: 'fair_share',
          message: 'Waiting for its fair share.',
          position: 9,
          lane: 'standard',
          fairnessKey: 'user-42',
          keyPosition: {
            keysAhead: 2,
            keysQueued: 5,
            unitsAheadInKey: 1,
            unitsAheadInTenant: 4,
            bucket: '#3',
          },
        },
      },
    ],
    'PUT /v1/admin/tenants/acme': [tenantView({ 'user-42': 3, 'org:7/a=b': 0.5 }), tenantView(undefined)],
    'POST /v1/runs/run-a-1/approve': [{ runId: 'run-a-1', decision: 'approved' }],
    'GET /v1/approvals': [
      {
        items: [
          {
            ...runView('awaiting_approval'),
            gateId: 2,
            proposal: { wire: 10 },
            openedAt: '2026-01-01T00:01:00.000Z',
            timeout: { seconds: 60, onTimeout: 'reject', expiresAt: '2026-01-01T00:02:00.000Z' },
            links: { run: '/v1/runs/run-a-1', approve: '', reject: '' },
          },
        ],
        nextCursor: 'c2',
      },
    ],
  });
  let url: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'fairway-cli-'));
  const configFile = path.join(dir, 'config.json');
  beforeAll(async () => {
    await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    writeFileSync(
      configFile,
      JSON.stringify({
        default: 'local',
        profiles: { local: { url, token: 'from-default' }, ops: { url, token: 'from-ops' } },
      }),
    );
  });
  afterAll(() => new Promise<void>((resolve) => api.server.close(() => resolve())));

  const env = (extra: Record<string, string> = {}) => ({ FAIRWAY_CONFIG: configFile, ...extra });

  it('drain --wait polls the scheduler until nothing is in flight', async () => {
    const t = terminal();
    const code = await run(['drain', '--wait', '--interval', '1'], t.io, env());
    expect(t.err.filter((l) => !l.startsWith('draining:'))).toEqual([]);
    expect(code).toBe(0);
    expect(t.out.join('\n')).toMatch(/^Drained: intake refuse, nothing in flight/);
    expect(t.sleeps).toBe(2);
    expect(api.seen.filter((s) => s.url === '/v1/admin/scheduler')).toHaveLength(3);
    expect(api.seen.find((s) => s.url === '/v1/admin/drain')?.body).toEqual({ intake: 'refuse' });
  });

  it("explain shows a queued run's fairness key and its place among its tenant's keys", async () => {
    const t = terminal();
    expect(await run(['explain', 'run-a-2'], t.io, env())).toBe(0);
    const out = t.out.join('\n');
    expect(out).toMatch(/position\s+9 in the standard lane/);
    expect(out).toMatch(
      /key\s+user-42 \(bucket #3\): 2 of 5 keys ahead, 4 runs of the tenant \(1 of its own\)/,
    );
  });

  it('runs submit --fairness-key sends the key; runs get shows it', async () => {
    const t = terminal();
    const args = ['runs', 'submit', 'synthetic', '{"steps":1}', '--fairness-key', 'user-42'];
    expect(await run(args, t.io, env())).toBe(0);
    expect(api.seen.filter((x) => x.url === '/v1/runs').at(-1)?.body).toEqual({
      agent: 'synthetic',
      input: { steps: 1 },
      fairnessKey: 'user-42',
    });
    const got = terminal();
    expect(await run(['runs', 'get', 'run-a-2'], got.io, env())).toBe(0);
    expect(got.out.join('\n')).toMatch(/fairness key\s+user-42/);
  });

  it('tenants update --key-weight sends the whole map and shows it; --clear-key-weights clears it', async () => {
    const puts = () => api.seen.filter((x) => x.method === 'PUT').map((x) => x.body);
    const set = terminal();
    const args = ['tenants', 'update', 'acme', '--key-weight', 'user-42=3', '--key-weight', 'org:7/a=b=0.5'];
    expect(await run(args, set.io, env())).toBe(0);
    expect(puts()).toEqual([{ keyWeights: { 'user-42': 3, 'org:7/a=b': 0.5 } }]);
    expect(set.out.join('\n')).toMatch(/key weights\s+user-42=3 org:7\/a=b=0\.5/);
    const clear = terminal();
    expect(await run(['tenants', 'update', 'acme', '--clear-key-weights'], clear.io, env())).toBe(0);
    expect(puts().at(-1)).toEqual({ keyWeights: null });
    expect(clear.out.join('\n')).toMatch(/key weights\s+- \(every key weighs 1\)/);
    // A malformed pair is a usage error before any request.
    for (const bad of ['user-42', '=3', 'user=0', 'user=x']) {
      const t = terminal();
      expect(await run(['tenants', 'update', 'acme', '--key-weight', bad], t.io, env())).not.toBe(0);
      expect(t.err.join('\n')).toMatch(/key=weight/);
    }
    expect(puts()).toHaveLength(2);
  });

  it('takes the token from --token, then --profile, then the environment, then the default profile', async () => {
    const last = () => api.seen.at(-1)!.auth;
    const t = terminal();
    expect(await run(['approvals', 'approve', 'run-a-1'], t.io, env())).toBe(0);
    expect(last()).toBe('Bearer from-default');
    expect(await run(['approvals', 'approve', 'run-a-1'], t.io, env({ FAIRWAY_ADMIN_TOKEN: 'env' }))).toBe(0);
    expect(last()).toBe('Bearer env');
    expect(
      await run(
        ['--profile', 'ops', 'approvals', 'approve', 'run-a-1'],
        t.io,
        env({ FAIRWAY_ADMIN_TOKEN: 'env' }),
      ),
    ).toBe(0);
    expect(last()).toBe('Bearer from-ops');
    expect(
      await run(['approvals', 'approve', 'run-a-1', '--token', 'flag', '--profile', 'ops'], t.io, env()),
    ).toBe(0);
    expect(last()).toBe('Bearer flag');
    expect(t.out.at(-1)).toBe('run-a-1 approved.');
    const bad = terminal();
    expect(await run(['status', '--profile', 'prod'], bad.io, env())).toBe(2);
    expect(bad.err.join('\n')).toMatch(/No profile "prod" in .*config\.json \(profiles: local, ops\)/);
  });

  it('approvals approve --gate sends the gate decided with the note', async () => {
    const t = terminal();
    expect(await run(['approvals', 'approve', 'run-a-1', '--gate', '2', '--note', 'ok'], t.io, env())).toBe(
      0,
    );
    expect(api.seen.at(-1)?.body).toEqual({ gateId: 2, note: 'ok' });
    expect(await run(['approvals', 'approve', 'run-a-1', '--gate', '0'], terminal().io, env())).toBe(2);
  });

  it('approvals list reads the gates waiting (GET /v1/approvals) and shows the gate id a decision names', async () => {
    const t = terminal();
    expect(
      await run(['approvals', 'list', '--tenant', 'a', '--limit', '5', '--cursor', 'c1'], t.io, env()),
    ).toBe(0);
    expect(api.seen.at(-1)?.url).toBe('/v1/approvals?tenant=a&limit=5&cursor=c1');
    const out = t.out.join('\n');
    expect(out).toMatch(/^RUN\s+TENANT\s+AGENT\s+GATE\s+OPENED\s+ON TIMEOUT$/m);
    expect(out).toMatch(
      /^run-a-1\s+a\s+triage\s+2\s+2026-01-01T00:01:00.000Z\s+reject at 2026-01-01T00:02:00.000Z$/m,
    );
    expect(out).toMatch(/More: --cursor c2/);
  });

  it('runs wait --until stops at the status asked for; without it a failed run exits 5', async () => {
    const t = terminal();
    expect(
      await run(['runs', 'wait', 'run-a-1', '--until', 'awaiting_approval', '--json'], t.io, env()),
    ).toBe(0);
    expect(JSON.parse(t.out.join('\n'))).toMatchObject({ status: 'awaiting_approval' });
    const f = terminal();
    expect(await run(['runs', 'wait', 'run-a-1'], f.io, env())).toBe(5);
    expect(f.err.join('\n')).toMatch(/Run run-a-1 ended failed \(step_failed: boom\)/);
  });

  it('answers usage errors with one message and a suggestion, not the whole usage', async () => {
    const t = terminal();
    expect(await run(['stauts'], t.io, env())).toBe(2);
    expect(t.err.join('\n')).toBe(
      "error: unknown command 'stauts'\n(Did you mean status?)\n(add --help for usage)",
    );
    const sub = terminal();
    expect(await run(['tenants', 'craete', 'x'], sub.io, env())).toBe(2);
    expect(sub.err[0]).toMatch(/Did you mean create\?/);
    const opt = terminal();
    expect(await run(['watch', '--count', '0'], opt.io, env())).toBe(2);
    expect(opt.err[0]).toMatch(/--count <n>' argument '0' is invalid/);
    const v = terminal();
    expect(await run(['--version'], v.io, env())).toBe(0);
    expect(v.out).toEqual(['0.1.0']);
    const h = terminal();
    expect(await run(['runs', 'wait', '--help'], h.io, env())).toBe(0);
    expect(h.out.join('\n')).toMatch(/^Usage: fairway runs wait \[options\] <runId>/);
    expect(h.out.join('\n')).toMatch(/--until <statuses>/);
  });

  it('a missing token exits 3 and says where a token comes from', async () => {
    const t = terminal();
    expect(
      await run(['status'], t.io, { FAIRWAY_CONFIG: path.join(dir, 'none.json'), FAIRWAY_URL: url }),
    ).toBe(3);
    expect(t.err[0]).toMatch(/No token: pass --token, set FAIRWAY_ADMIN_TOKEN/);
  });
});
