import { spawn } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isForbiddenAddress } from '../../src/api/webhooks/targets';
import { startTestStack, waitFor, type TestStack } from '../support/stack';

/**
 * Issue 44's findings about what reaches the API from outside, replayed against a real stack (dev
 * server, worker, API with its default WEBHOOK_TARGETS=public): a deep body in UTF-16 (item 6), and a
 * webhook to a name that resolves inside (item 8); and `npm start` with a configuration the ledger
 * cannot reconcile (item 5).
 */
describe('issue 44: bodies and webhook targets (real stack)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ WEBHOOK_POLL_MS: '200', WEBHOOK_RETRY_BASE_MS: '200' });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('item 6: a body nested 200,000 deep in UTF-16 is 415 in the JSON error shape on every JSON route', async () => {
    const key = await s.tenant('deep16');
    const deep = (head: string) =>
      Buffer.from(`${head}{"s":"\u4e22","x":${'['.repeat(200_000)}1${']'.repeat(200_000)}}}`, 'utf16le');
    for (const [method, route, head] of [
      ['PUT', '/v1/triggers/deep', '{"eventType":"t","agent":"synthetic","input":'],
      ['POST', '/v1/runs', '{"agent":"synthetic","input":'],
      ['POST', '/v1/events', '{"specversion":"1.0","id":"e1","type":"t","source":"s","data":'],
    ] as const) {
      const res = await fetch(`${s.apiUrl!}${route}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json; charset=utf-16le' },
        body: deep(head),
      });
      const body = (await res.json()) as { error?: { code: string } };
      expect(res.status, `${method} ${route}: ${JSON.stringify(body)}`).toBe(415);
      expect(body.error?.code).toBe('unsupported_media_type');
    }
    // Nothing was created.
    expect((await s.call('GET', '/v1/triggers', { token: key })).body.items).toEqual([]);
    expect((await s.call('GET', '/v1/runs', { token: key })).body.items).toEqual([]);
  });

  it('item 8: a delivery to a name resolving inside fails as "forbidden address", without the address', async () => {
    // This host's own name resolves to a loopback or private address (/etc/hosts): a name, not a
    // literal, so the endpoint is taken and the address is only seen when connecting.
    const name = os.hostname();
    const inside = (await lookup(name, { all: true })).map((a) => a.address);
    expect(inside.some(isForbiddenAddress), `${name} resolves to ${inside.join(', ')}`).toBe(true);
    const key = await s.tenant('inside');
    const hook = await s.call('POST', '/v1/webhooks', {
      token: key,
      body: { url: `http://${name}:9/hooks`, events: ['run.completed'] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const run = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 1, tokensPerStep: 10 } },
    });
    expect(run.status).toBe(202);
    const log = await waitFor(
      () => s.call('GET', `/v1/webhooks/${hook.body.id as string}/deliveries`, { token: key }),
      (r) => (r.body?.items?.[0]?.attempts?.length ?? 0) >= 1,
      90_000,
    );
    const text = JSON.stringify(log.body);
    expect(log.body.items[0].attempts[0]).toMatchObject({
      status: null,
      error: expect.stringMatching(/forbidden address/),
    });
    for (const address of inside) expect(text).not.toContain(address);
  });

  it('item 5: npm start with a usage lookup that cannot see every model refuses to start, naming it', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fairway-refused-'));
    try {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', path.join(__dirname, '..', '..', 'src', 'main.ts')],
        {
          env: {
            ...process.env,
            DATA_DIR: dataDir,
            MODELS: JSON.stringify({
              gpt: { dialect: 'openai' },
              claude: { dialect: 'anthropic', baseUrl: 'https://api.anthropic.com' },
            }),
            MODEL_DEFAULT: 'gpt',
            MODEL_BASE_URL: 'https://api.openai.com/v1',
            CHARGE_USAGE_LOOKUP: 'openai-stored',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      // A process that starts instead of refusing is stopped (and the test fails on its exit code).
      const started = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      clearTimeout(started);
      expect(code, output).not.toBe(0);
      expect(output).toMatch(/MODELS\.claude\.baseUrl: .*CHARGE_USAGE_LOOKUP=openai-stored/);
      expect(output).not.toMatch(/Fairway is up/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
