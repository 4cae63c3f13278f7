import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/main';
import { createClient } from '../../../src/client';
import { makeHarness, type Harness } from '../api/harness';

/** `fairway schedules …` and the typed client's `schedules` against the real API (its in-memory schedules). */
describe('fairway schedules', () => {
  let h: Harness;
  let server: Server;
  let url: string;
  let key: string;
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    out: (t: string) => out.push(t),
    err: (t: string) => err.push(t),
    isTty: false,
    sleep: async () => true,
  };
  const cli = (token: string, ...args: string[]) => run(['--url', url, '--token', token, ...args], io, {});

  beforeEach(async () => {
    h = makeHarness();
    key = await h.tenant('acme');
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    out.length = 0;
    err.length = 0;
  });
  afterEach(async () => {
    await new Promise((r) => server.close(r));
    await h.close();
  });

  it('puts, lists, gets, triggers and deletes, with --json and exit codes', async () => {
    expect(
      await cli(key, 'schedules', 'put', 'nightly', 'synthetic', '{"steps":2}', '--cron', '0 3 * * *'),
    ).toBe(0);
    expect(out.join('\n')).toMatch(/cron 0 3 \* \* \*/);
    expect(await cli(key, '--json', 'schedules', 'list')).toBe(0);
    expect(JSON.parse(out.at(-1)!).items.map((s: { name: string }) => s.name)).toEqual(['nightly']);
    expect(await cli(key, 'schedules', 'trigger', 'nightly')).toBe(0);
    expect(out.at(-1)).toBe('Schedule nightly fired.');
    expect(
      await cli(
        h.admin().Authorization.slice(7),
        '--json',
        'schedules',
        'get',
        'nightly',
        '--tenant',
        'acme',
      ),
    ).toBe(0);
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ name: 'nightly', tenant: 'acme', actionsTaken: 1 });
    expect(await cli(key, 'schedules', 'delete', 'nightly')).toBe(0);
    expect(await cli(key, 'schedules', 'get', 'nightly')).toBe(4);
    expect(await cli(key, 'schedules', 'put', 'x', 'synthetic', '--cron', '* * * * *', '--every', '5')).toBe(
      2,
    );
    expect(await cli(key, 'schedules', 'put', 'x', 'synthetic', '--every', '0')).toBe(2);
  });

  it('is what the typed client calls too', async () => {
    const fairway = createClient({ baseUrl: url, apiKey: key });
    const put = await fairway.schedules.put('hourly', {
      agent: 'synthetic',
      input: { steps: 1 },
      intervalSeconds: 3600,
      overlap: 'buffer_one',
    });
    expect(put).toMatchObject({ name: 'hourly', intervalSeconds: 3600, overlap: 'buffer_one', paused: null });
    expect((await fairway.schedules.list()).items.map((s) => s.name)).toEqual(['hourly']);
    expect(await fairway.schedules.trigger('hourly')).toMatchObject({ triggered: true });
    expect((await fairway.schedules.get('hourly')).actionsTaken).toBe(1);
    await fairway.schedules.delete('hourly');
    await expect(fairway.schedules.get('hourly')).rejects.toMatchObject({ status: 404 });
  });
});
