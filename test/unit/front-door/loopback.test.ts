import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config';
import { startEffectSink } from '../../../src/standins/effectsink/sink';
import { startSimulator } from '../../../src/standins/modelplane';

/**
 * `npm start` and the single-part entry points listen on loopback unless HOST opts in to more, and the
 * simulator's `/admin/*` and the sink's `/summary` answer a peer on another address only with the
 * operator token (SIM_ADMIN_TOKEN).
 */

/** An address of this host that is not loopback (a peer connecting to it is not loopback either). */
const external = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
/** Without such an address the network checks skip, unless CI is set: then they fail. */
const skipNetwork = !external && !process.env.CI;
if (skipNetwork) console.warn('network checks skipped: this host has no IPv4 address but loopback');
function needExternal(): void {
  if (!external) throw new Error('this host has no IPv4 address but loopback: the network checks cannot run');
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function reach(url: string, init: RequestInit = {}): Promise<number | 'refused'> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(3000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 'refused';
  }
}

describe('loopback by default', () => {
  it('HOST defaults to 127.0.0.1', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it.skipIf(skipNetwork)('a simulator started without a host is not reachable from the network', async () => {
    needExternal();
    const sim = await startSimulator({ port: 0, tpm: 1000, rpm: 100, seed: 1 });
    closers.push(() => sim.close());
    expect(await reach(`http://127.0.0.1:${sim.port}/healthz`)).toBe(200);
    expect(await reach(`http://${external}:${sim.port}/healthz`)).toBe('refused');
  });

  it.skipIf(skipNetwork)('a sink started without a host is not reachable from the network', async () => {
    needExternal();
    const sink = await startEffectSink({ port: 0 });
    closers.push(() => sink.close());
    const port = new URL(sink.url).port;
    expect(await reach(`http://127.0.0.1:${port}/healthz`)).toBe(200);
    expect(await reach(`http://${external}:${port}/healthz`)).toBe('refused');
  });
});

describe('operator routes of the simulator and the sink', () => {
  const token = 'sim-admin-token-0123456789abcdef0123';

  it.skipIf(skipNetwork)('refuse a network peer without the token, with 403', async () => {
    needExternal();
    const sim = await startSimulator({ port: 0, host: '0.0.0.0', tpm: 1000, rpm: 100, seed: 1 });
    closers.push(() => sim.close());
    const remote = `http://${external}:${sim.port}`;
    const post = { method: 'POST', headers: { 'content-type': 'application/json' } };
    expect(await reach(`${remote}/admin/spend-cap`, { ...post, body: '{"enabled":true,"tenant":"t"}' })).toBe(
      403,
    );
    expect(await reach(`${remote}/admin/faults`, { ...post, body: '{"times":1}' })).toBe(403);
    expect(await reach(`${remote}/admin/bill`)).toBe(403);
    expect(await reach(`${remote}/admin/stats`)).toBe(403);
    expect(sim.state.spendCapTenants.size).toBe(0);
    // The chat endpoint is the provider's API, open as a provider's is (it needs no operator).
    expect(await reach(`${remote}/healthz`)).toBe(200);
    // A loopback peer (the drills, the tests, a compose healthcheck) is the operator.
    expect(await reach(`http://127.0.0.1:${sim.port}/admin/bill`)).toBe(200);

    const sink = await startEffectSink({ port: 0, host: '0.0.0.0' });
    closers.push(() => sink.close());
    const port = new URL(sink.url).port;
    expect(await reach(`http://${external}:${port}/summary`)).toBe(403);
    expect(await reach(`http://127.0.0.1:${port}/summary`)).toBe(200);
  });

  it.skipIf(skipNetwork)('let a network peer in with the operator token', async () => {
    needExternal();
    const sim = await startSimulator({
      port: 0,
      host: '0.0.0.0',
      tpm: 1000,
      rpm: 100,
      seed: 1,
      adminToken: token,
    });
    closers.push(() => sim.close());
    const remote = `http://${external}:${sim.port}`;
    expect(await reach(`${remote}/admin/bill`, { headers: { authorization: `Bearer ${token}` } })).toBe(200);
    expect(await reach(`${remote}/admin/bill`, { headers: { authorization: `Bearer ${token}x` } })).toBe(403);

    const sink = await startEffectSink({ port: 0, host: '0.0.0.0', adminToken: token });
    closers.push(() => sink.close());
    const port = new URL(sink.url).port;
    expect(
      await reach(`http://${external}:${port}/summary`, { headers: { authorization: `Bearer ${token}` } }),
    ).toBe(200);
  });
});
