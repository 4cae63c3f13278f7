import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/main';
import { terminal } from './terminal';

describe('fairway tenants delete / approver-key', () => {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'DELETE' && req.url === '/v1/admin/tenants/acme') {
        res.writeHead(204);
        res.end();
      } else if (req.method === 'DELETE' && req.url === '/v1/admin/tenants/busy') {
        json(409, { error: { code: 'conflict', message: 'Tenant busy still has active runs (2 queued).' } });
      } else if (req.method === 'POST' && req.url === '/v1/admin/tenants/acme/approver-key') {
        json(201, { tenant: 'acme', approverKey: 'fw_approver' });
      } else {
        json(404, { error: { code: 'not_found', message: 'Tenant nobody was not found.' } });
      }
    });
  });
  let url: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
  });

  const env = () => ({
    FAIRWAY_URL: url,
    FAIRWAY_ADMIN_TOKEN: 'admin-token',
    FAIRWAY_CONFIG: '/nonexistent.json',
  });

  it('sends DELETE to the admin route and says what went; a blocked delete shows why and exits non-zero', async () => {
    const t = terminal();
    expect(await run(['tenants', 'delete', 'acme'], t.io, env())).toBe(0);
    expect(t.out.join('\n')).toMatch(/Tenant acme deleted/);
    const busy = terminal();
    expect(await run(['tenants', 'delete', 'busy'], busy.io, env())).toBe(1);
    expect(busy.err.join('\n')).toMatch(/409|conflict: Tenant busy still has active runs \(2 queued\)/);
    expect(await run(['tenants', 'delete', 'nobody'], terminal().io, env())).toBe(4);
    expect(seen).toEqual([
      'DELETE /v1/admin/tenants/acme',
      'DELETE /v1/admin/tenants/busy',
      'DELETE /v1/admin/tenants/nobody',
    ]);
  });

  it('issues an approver key and prints it once', async () => {
    const t = terminal();
    expect(await run(['tenants', 'approver-key', 'acme'], t.io, env())).toBe(0);
    expect(t.out.join('\n')).toMatch(/approver key {2}fw_approver/);
    expect(seen).toEqual(['POST /v1/admin/tenants/acme/approver-key']);
  });
});
