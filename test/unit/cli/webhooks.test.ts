import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/main';
import { createClient } from '../../../src/client';
import { useHarness } from '../api/harness';

/** `fairway webhooks …` and the typed client's `webhooks`, against the real API on its in-memory fleet. */
describe('fairway webhooks and client.webhooks', () => {
  const h = useHarness({ tenants: ['acme'] });

  it('creates (showing the secret once), lists, shows deliveries and deletes', async () => {
    const server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const lines: string[] = [];
      const io = {
        out: (t: string) => lines.push(t),
        err: (t: string) => lines.push(t),
        isTty: false,
        sleep: async () => true,
      };
      const cli = (...args: string[]) => run(['--url', url, '--token', h.keys.acme!, ...args], io, {});

      expect(await cli('webhooks', 'create', 'https://hooks.example.com/in', '--events', 'run.failed')).toBe(
        0,
      );
      expect(lines.at(-1)).toMatch(/secret\s+whsec_\S+ {2}\(shown only now/);
      const id = /webhook\s+(wh_\S+)/.exec(lines.at(-1)!)![1]!;
      expect(await cli('webhooks', 'list')).toBe(0);
      expect(lines.at(-1)).toMatch(new RegExp(`${id}\\s+https://hooks.example.com/in\\s+run.failed`));
      expect(lines.at(-1)).not.toMatch(/whsec_/);
      expect(await cli('webhooks', 'deliveries', id)).toBe(0);
      expect(lines.at(-1)).toBe('No deliveries.');
      expect(await cli('webhooks', 'create', 'http://127.0.0.1:9/')).toBe(1); // the API's 400
      expect(lines.at(-1)).toMatch(/url: The URL names a loopback/);
      expect(await cli('webhooks', 'create', 'https://x.example/', '--events', 'run.started')).toBe(2);

      h.clock.now += 1_000; // listed oldest first
      const client = createClient({ baseUrl: url, apiKey: h.keys.acme! });
      const made = await client.webhooks.create({
        url: 'https://other.example.com/',
        events: ['batch.completed'],
      });
      expect(made.secret).toMatch(/^whsec_/);
      expect((await client.webhooks.list()).items.map((w) => w.id)).toEqual([id, made.id]);
      expect(await client.webhooks.deliveries(made.id, { limit: 5 })).toEqual({ items: [] });
      await client.webhooks.delete(made.id);
      expect(await cli('--json', 'webhooks', 'delete', id)).toBe(0);
      expect(JSON.parse(lines.at(-1)!)).toEqual({ id, deleted: true });
      expect(await cli('webhooks', 'delete', id)).toBe(4);
      expect((await client.webhooks.list()).items).toEqual([]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
