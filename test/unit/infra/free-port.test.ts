import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freeLowPorts, freePort } from '../../../src/infra/cluster/child';

/**
 * A port handed to a process that binds it seconds later must not be one the kernel hands out
 * meanwhile: outgoing connections and `listen(0)` take their ports from the ephemeral range
 * (32768 and up on Linux), so the ports chosen for later are below it. parts.test's API failed with
 * EADDRINUSE on a kernel-chosen port that a busy suite's connections had taken while it waited for
 * Temporal.
 */
const ephemeralFloor = 32_768;

const listen = (port: number): Promise<net.Server> =>
  new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen({ port, host: '127.0.0.1' }, () => resolve(srv));
  });

describe('free ports for later', () => {
  it('are below the ephemeral range, distinct, and bindable', async () => {
    const ports = [...(await freeLowPorts(20)), await freePort()];
    for (const p of ports) {
      expect(p).toBeGreaterThanOrEqual(1024);
      expect(p).toBeLessThan(ephemeralFloor);
    }
    expect(new Set(ports.slice(0, 20)).size).toBe(20);
    const srv = await listen(ports[20]!);
    srv.close();
  });

  it('never returns a port something already listens on', async () => {
    const taken = await Promise.all((await freeLowPorts(50, '127.0.0.1', 30_000, 30_060)).map(listen));
    try {
      // Ten ports of the sixty are left; every answer must be one of them.
      const left = await freeLowPorts(5, '127.0.0.1', 30_000, 30_060);
      const busy = new Set(taken.map((s) => (s.address() as net.AddressInfo).port));
      for (const p of left) expect(busy.has(p)).toBe(false);
    } finally {
      for (const s of taken) s.close();
    }
  });
});
