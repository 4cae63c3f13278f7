import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EnvSchema, loadConfig } from '../../src/config';

/**
 * The deployment files stay true to the code: docker-compose.yml validates and wires the expected
 * services and ports, and .env.example lists exactly the variables src/config.ts reads, with the
 * same defaults.
 */

const root = path.resolve(__dirname, '..', '..');
const COMPOSE_FILE = path.join(root, 'docker-compose.yml');
const INSTALL_HINT =
  'docker-compose is not on PATH; install it with `apt-get install -y docker-compose` to validate docker-compose.yml.';

function composeVersion(): string | undefined {
  const r = spawnSync('docker-compose', ['version'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? r.stdout.split('\n')[0]?.trim() : undefined;
}

const version = composeVersion();
const required = Boolean(process.env.CI || process.env.REQUIRE_COMPOSE);
/** Without docker-compose the checks skip, unless CI (or REQUIRE_COMPOSE) is set: then they fail. */
const skip = !version && !required;
if (skip) console.warn(`docker-compose.yml checks skipped: ${INSTALL_HINT}`);

// Hermetic runs: an empty --env-file so a developer's ./.env cannot change the result.
const tmp = mkdtempSync(path.join(os.tmpdir(), 'fairway-compose-'));
const emptyEnvFile = path.join(tmp, 'empty.env');
writeFileSync(emptyEnvFile, '');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** What a user sets before `docker compose up` (docs/operating.md): the admin token and each tool's credential. */
const TOOL_CREDENTIALS = {
  lookup: 'compose-test-lookup-credential-0123456789',
  pager: 'compose-test-pager-credential-0123456789',
  scanner: 'compose-test-scanner-credential-0123456789',
} as const;
const USER_ENV = {
  ADMIN_TOKEN: 'compose-test-token-0123456789abcdef',
  TOOL_LOOKUP_CREDENTIAL: TOOL_CREDENTIALS.lookup,
  TOOL_PAGER_CREDENTIAL: TOOL_CREDENTIALS.pager,
  TOOL_SCANNER_CREDENTIAL: TOOL_CREDENTIALS.scanner,
  GRAFANA_ADMIN_PASSWORD: 'compose-test-grafana-password-0123',
};

function composeConfig(env: Record<string, string | undefined>) {
  if (!version) throw new Error(`CI or REQUIRE_COMPOSE is set: ${INSTALL_HINT}`);
  const cleanEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...USER_ENV, ...env })) {
    if (v !== undefined && !k.startsWith('COMPOSE_')) cleanEnv[k] = v;
  }
  return spawnSync('docker-compose', ['--env-file', emptyEnvFile, '-f', COMPOSE_FILE, 'config'], {
    cwd: root,
    env: cleanEnv,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/**
 * Rough reader of `docker-compose config` output (YAML, the only format Compose v1 prints):
 * each service's text block, keyed by name.
 */
function serviceBlocks(yaml: string): Map<string, string> {
  const lines = yaml.split('\n');
  const start = lines.findIndex((l) => l === 'services:');
  const blocks = new Map<string, string>();
  let name: string | undefined;
  let body: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break; // next top-level key (networks:, volumes:, ...)
    const m = /^ {2}([A-Za-z0-9._-]+):\s*$/.exec(line);
    if (m) {
      if (name) blocks.set(name, body.join('\n'));
      name = m[1];
      body = [];
    } else {
      body.push(line);
    }
  }
  if (name) blocks.set(name, body.join('\n'));
  return blocks;
}

/** One published port: the host interface ('' = every interface), the host port and the container port. */
interface Published {
  host: string;
  published: string;
  target: string;
}

/**
 * The published ports of one service block. Compose v1 prints a port bound to every interface as
 * `- published: 3000\n  target: 3000` and one bound to an address as `- 127.0.0.1:7233:7233/tcp`.
 */
function publishedPorts(block: string): Published[] {
  const ports: Published[] = [];
  const entries = block.split(/\n\s*- /);
  for (const entry of entries) {
    const published = /published:\s*['"]?(\d+)/.exec(entry)?.[1];
    const target = /target:\s*['"]?(\d+)/.exec(entry)?.[1];
    const hostIp = /host_ip:\s*['"]?([\d.:a-f]+)/.exec(entry)?.[1] ?? '';
    if (published && target) ports.push({ host: hostIp, published, target });
    const short = /^['"]?(?:([\d.]+):)?(\d+):(\d+)(?:\/\w+)?['"]?\s*$/.exec(entry.split('\n')[0]!.trim());
    if (short) ports.push({ host: short[1] ?? '', published: short[2]!, target: short[3]! });
  }
  return ports;
}

/** `host:published:target` (host omitted when every interface) of each published port. */
function portPairs(block: string): string[] {
  return publishedPorts(block).map((p) => `${p.host ? `${p.host}:` : ''}${p.published}:${p.target}`);
}

/** KEY=value lines of .env.example, comments skipped. */
function readEnvExample(): Map<string, string> {
  const text = readFileSync(path.join(root, '.env.example'), 'utf8');
  const vars = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) vars.set(m[1]!, m[2]!);
  }
  return vars;
}

describe('docker-compose.yml', () => {
  it.skipIf(skip)(
    `validates and wires postgresql, temporal, temporal-ui, sim, worker and api${skip ? ` (skipped: ${INSTALL_HINT})` : ''}`,
    () => {
      const r = composeConfig({});
      expect(r.error).toBeUndefined();
      expect(r.status, r.stderr).toBe(0);

      const services = serviceBlocks(r.stdout);
      for (const name of [
        'postgresql',
        'temporal-schema',
        'temporal',
        'temporal-create-namespace',
        'temporal-ui',
        'sim',
        'worker',
        'api',
      ]) {
        expect([...services.keys()], `service ${name}`).toContain(name);
      }

      const expectedPorts: Record<string, string> = {
        temporal: '127.0.0.1:7233:7233',
        'temporal-ui': '127.0.0.1:8080:8080',
        sim: '127.0.0.1:3001:3001',
        prometheus: '127.0.0.1:9090:9090',
        grafana: '127.0.0.1:3030:3000',
        api: '3000:3000',
      };
      for (const [name, pair] of Object.entries(expectedPorts)) {
        expect(portPairs(services.get(name)!), `ports of ${name}`).toContain(pair);
      }

      for (const name of ['sim', 'worker', 'api']) {
        const block = services.get(name)!;
        expect(block, name).toMatch(/TEMPORAL_ADDRESS: temporal:7233/);
        expect(block, name).toMatch(/MODEL_BASE_URL: http:\/\/sim:3001/);
        expect(block, name).toMatch(/DATA_DIR: \/data/);
        expect(block, name).toMatch(/fairway-data:\/data/);
        expect(block, name).toMatch(new RegExp(`start:${name}`));
      }
      expect(services.get('api')).toMatch(new RegExp(`ADMIN_TOKEN: ${USER_ENV.ADMIN_TOKEN}`));

      // Production shape: two workers and two APIs sharing the PostgreSQL stores and the effect sink,
      // on the server release `npm run cluster` builds.
      expect(services.get('worker')).toMatch(/replicas: 2/);
      expect(portPairs(services.get('api-2')!)).toContain('3002:3000');
      for (const name of ['worker', 'api', 'api-2']) {
        expect(services.get(name), name).toMatch(
          /DATABASE_URL: postgres:\/\/temporal:temporal@postgresql:5432\/fairway/,
        );
        expect(services.get(name), name).toMatch(/EFFECT_SINK_URL: http:\/\/sink:3003/);
      }
      expect(services.get('sink')).toMatch(/start:sink/);
      expect(services.get('temporal')).toMatch(/image: temporalio\/server:1\.32\.2/);
      expect(services.get('temporal')).toMatch(/NUM_HISTORY_SHARDS: '?4/);

      // The worker drains in-flight activities on SIGTERM: Docker must wait at least 2 minutes.
      const grace = /stop_grace_period:\s*['"]?(\d+)(m|s)?/.exec(services.get('worker')!);
      expect(grace, 'worker stop_grace_period').not.toBeNull();
      const seconds = Number(grace![1]) * (grace![2] === 'm' ? 60 : 1);
      expect(seconds).toBeGreaterThanOrEqual(120);

      // Every image is pinned to a tag, never latest.
      const images = [...r.stdout.matchAll(/^\s+image:\s*(\S+)/gm)].map((m) => m[1]!);
      expect(images.length).toBeGreaterThanOrEqual(6);
      for (const image of images) {
        expect(image, image).toMatch(/:[^/]+$/);
        expect(image, image).not.toMatch(/:latest$/);
      }
    },
  );

  it.skipIf(skip)(
    `runs each tool on a worker of its own that holds only that tool's credential${skip ? ` (skipped: ${INSTALL_HINT})` : ''}`,
    () => {
      const r = composeConfig({});
      expect(r.status, r.stderr).toBe(0);
      const services = serviceBlocks(r.stdout);
      const holders = (credential: string) =>
        [...services].filter(([, block]) => block.includes(credential)).map(([name]) => name);

      for (const [tool, credential] of Object.entries(TOOL_CREDENTIALS)) {
        const name = `tool-${tool}`;
        const block = services.get(name);
        expect(block, `service ${name}`).toBeDefined();
        expect(block).toMatch(/start:tools/);
        expect(block).toMatch(new RegExp(`WORKER_TOOLS: ['"]?${tool}['"]?\n`));
        expect(block).toMatch(/TEMPORAL_ADDRESS: temporal:7233/);
        expect(block).toMatch(/DATABASE_URL: postgres:\/\/temporal:temporal@postgresql:5432\/fairway/);
        expect(block).toMatch(/EFFECT_SINK_URL: http:\/\/sink:3003/);
        // Its own credential, under its own variable, and no other tool's.
        expect(block).toMatch(new RegExp(`TOOL_${tool.toUpperCase()}_CREDENTIAL: ${credential}\n`));
        expect([...block!.matchAll(/TOOL_[A-Z]+_CREDENTIAL/g)].map((m) => m[0])).toEqual([
          `TOOL_${tool.toUpperCase()}_CREDENTIAL`,
        ]);
        // Only its tool worker and the effect sink (which authenticates it) see it.
        expect(holders(credential).sort(), `who holds the ${tool} credential`).toEqual([name, 'sink'].sort());
      }
      // The pager's pages land in the sink, which checks they come with the pager's credential.
      expect(services.get('sink')).toMatch(new RegExp(`TOOL_PAGER_CREDENTIAL: ${TOOL_CREDENTIALS.pager}\n`));
      // The fleet workers serve no tool (an unset WORKER_TOOLS would mean all of them) and hold none.
      const worker = services.get('worker')!;
      expect(worker).toMatch(/WORKER_TOOLS: ['"]{2}\n/);
      expect(worker).not.toMatch(/TOOL_[A-Z]+_CREDENTIAL/);
      for (const name of ['api', 'api-2', 'sim']) expect(services.get(name), name).not.toMatch(/TOOL_/);
      expect(loadConfig({ WORKER_TOOLS: '' }).tools.serve).toEqual([]);
    },
  );

  it.skipIf(skip)(
    `publishes only the API on every host interface; the rest on loopback or not at all${skip ? ` (skipped: ${INSTALL_HINT})` : ''}`,
    () => {
      const r = composeConfig({});
      expect(r.status, r.stderr).toBe(0);
      const services = serviceBlocks(r.stdout);
      const open: string[] = [];
      let published = 0;
      for (const [name, block] of services) {
        for (const port of publishedPorts(block)) {
          published += 1;
          if (port.host !== '127.0.0.1') open.push(`${name} ${port.host || '*'}:${port.published}`);
        }
      }
      expect(published).toBeGreaterThanOrEqual(7); // the parser sees loopback ports too
      expect(open.sort()).toEqual(['api *:3000', 'api-2 *:3002']);
    },
  );

  it.skipIf(skip)(
    `runs Grafana without anonymous access and refuses to start without its admin password${skip ? ` (skipped: ${INSTALL_HINT})` : ''}`,
    () => {
      const r = composeConfig({});
      expect(r.status, r.stderr).toBe(0);
      const grafana = serviceBlocks(r.stdout).get('grafana')!;
      expect(grafana).toMatch(/GF_AUTH_ANONYMOUS_ENABLED: ['"]false['"]/);
      expect(grafana).toMatch(new RegExp(`GF_SECURITY_ADMIN_PASSWORD: ${USER_ENV.GRAFANA_ADMIN_PASSWORD}\n`));
      expect(grafana).not.toMatch(/GF_AUTH_ANONYMOUS_ORG_ROLE/);
    },
  );

  for (const variable of Object.keys(USER_ENV))
    it.skipIf(skip)(
      `refuses to start without ${variable}${skip ? ` (skipped: ${INSTALL_HINT})` : ''}`,
      () => {
        const r = composeConfig({ [variable]: undefined });
        expect(r.status).not.toBe(0);
        expect(r.stderr).toMatch(new RegExp(variable));
      },
    );
});

describe('.env.example', () => {
  it('lists exactly the variables of the EnvSchema in src/config.ts', () => {
    const documented = [...readEnvExample().keys()].sort();
    const read = Object.keys(EnvSchema.shape).sort();
    expect(read.length).toBeGreaterThan(10);
    expect(documented).toEqual(read);
  });

  it('gives each variable a comment line and its default', () => {
    const lines = readFileSync(path.join(root, '.env.example'), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (/^[A-Z][A-Z0-9_]*=/.test(line)) {
        expect(lines[i - 1], `comment above ${line}`).toMatch(/^# \S/);
      }
    });
    // Parsing the example must give exactly the configuration of an empty environment.
    const example = Object.fromEntries(readEnvExample());
    expect(loadConfig(example)).toEqual(loadConfig({}));
  });
});
