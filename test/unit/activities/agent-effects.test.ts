import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentEffectActivity as withSignal } from '../../../src/activities/agent-effects';
import type { EffectContext } from '../../../src/activities/agent-effects';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import type { EffectStore } from '../../../src/stores/effects/effect-store';

/** The activity outside a Temporal activity context: each attempt gets a signal of its own. */
const agentEffectActivity = (...a: [Parameters<typeof withSignal>[0], Parameters<typeof withSignal>[1]]) =>
  withSignal(...a, () => new AbortController().signal);

const req = (name = 'publish', args: Record<string, unknown> = { text: 'hi' }) => ({
  key: `run-t-1:${name}`,
  runId: 'run-t-1',
  tenant: 't',
  agent: 'research',
  name,
  args,
});

describe('applyAgentEffect over the worker effect functions', () => {
  let dir: string;
  let file: string;
  let store: EffectStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-agent-effects-'));
    file = join(dir, 'effects.db');
    store = openSqliteEffectStore(file);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs the function once per key and answers later attempts with the first delivery's result", async () => {
    const calls: [Record<string, unknown>, EffectContext][] = [];
    let n = 0;
    const apply = agentEffectActivity(store, {
      publish: async (args, ctx) => {
        calls.push([args, ctx]);
        return { id: ++n, at: new Date(0) };
      },
    });
    expect(await apply(req())).toEqual({ applied: true, result: { id: 1, at: '1970-01-01T00:00:00.000Z' } });
    expect(await apply(req())).toEqual({ applied: false, result: { id: 1, at: '1970-01-01T00:00:00.000Z' } });
    // Another worker process on the same store: still not run again.
    const other = openSqliteEffectStore(file);
    try {
      expect(await agentEffectActivity(other, { publish: () => ({ id: 99 }) })(req())).toEqual({
        applied: false,
        result: { id: 1, at: '1970-01-01T00:00:00.000Z' },
      });
    } finally {
      await other.close();
    }
    expect(calls).toEqual([
      [
        { text: 'hi' },
        {
          key: 'run-t-1:publish',
          runId: 'run-t-1',
          tenant: 't',
          agent: 'research',
          redelivery: false,
          signal: expect.any(AbortSignal),
        },
      ],
    ]);
  });

  it('calls again, marked as a redelivery, when the first attempt died before recording its result', async () => {
    const seen: boolean[] = [];
    const crashing = agentEffectActivity(store, {
      publish: () => {
        seen.push(false);
        throw new Error('worker killed mid-effect');
      },
    });
    await expect(crashing(req())).rejects.toThrow('worker killed mid-effect');
    const retry = agentEffectActivity(store, {
      publish: (_a, ctx) => {
        seen.push(ctx.redelivery);
        return 'done';
      },
    });
    expect(await retry(req())).toEqual({ applied: true, result: 'done' });
    expect(await retry(req())).toEqual({ applied: false, result: 'done' });
    expect(seen).toEqual([false, true]);
  });

  it('answers without a result for a function that returns nothing', async () => {
    const apply = agentEffectActivity(store, { notify: async () => undefined });
    expect(await apply(req('notify'))).toEqual({ applied: true });
    expect(await apply(req('notify'))).toEqual({ applied: false });
  });

  it('records a delivery before its result is serialised: a result that is not JSON fails for good, never runs again', async () => {
    let runs = 0;
    const apply = agentEffectActivity(store, {
      publish: () => {
        runs++;
        return { n: 1n };
      },
    });
    const err = await apply(req()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'EffectResultUnserialisable', nonRetryable: true });
    expect(await apply(req())).toEqual({ applied: false });
    expect(runs).toBe(1);
  });

  it("hands the function the attempt's cancellation signal", async () => {
    const aborted = AbortSignal.abort();
    let seen: AbortSignal | undefined;
    const apply = withSignal(store, { publish: (_a, ctx) => void (seen = ctx.signal) }, () => aborted);
    await apply(req());
    expect(seen).toBe(aborted);
  });

  it('refuses an unknown name for good, inherited properties included', async () => {
    const apply = agentEffectActivity(store, { publish: () => 1 });
    for (const name of ['nope', 'constructor', 'toString']) {
      const err = await apply(req(name)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: 'UnknownEffect', nonRetryable: true });
    }
    expect((await store.summary()).attempts).toBe(0);
  });
});
