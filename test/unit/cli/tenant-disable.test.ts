import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/main';
import { terminal } from './terminal';

const tenant = (disabled: boolean) => ({
  tenant: 'acme',
  settings: { weight: 1, maxQueued: 10, maxInFlight: 2, budget: { tokens: null, period: 'none' } },
  disabled,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('fairway tenants disable / enable', () => {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      const m = /^\/v1\/admin\/tenants\/acme\/(disable|enable)$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'not_found', message: 'Tenant nobody not found.' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(tenant(m[1] === 'disable')));
    });
  });
  let url: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const env = () => ({
    FAIRWAY_URL: url,
    FAIRWAY_ADMIN_TOKEN: 'admin-token',
    FAIRWAY_CONFIG: '/nonexistent.json',
  });

  it('posts to the admin route and says what the state means', async () => {
    const off = terminal();
    expect(await run(['tenants', 'disable', 'acme'], off.io, env())).toBe(0);
    expect(off.out.join('\n')).toMatch(/Tenant acme disabled: its keys are refused/);
    const on = terminal();
    expect(await run(['tenants', 'enable', 'acme', '--json'], on.io, env())).toBe(0);
    expect(JSON.parse(on.out.join('\n'))).toMatchObject({ tenant: 'acme', disabled: false });
    expect(seen).toEqual(['POST /v1/admin/tenants/acme/disable', 'POST /v1/admin/tenants/acme/enable']);
    const missing = terminal();
    expect(await run(['tenants', 'disable', 'nobody'], missing.io, env())).toBe(4);
  });
});
