import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentEffectActivity as withSignal } from '../../../src/activities/agent-effects';
import { HOLD_MS } from '../../../src/activities/agent-effects';
import type { EffectAttempt, EffectContext } from '../../../src/activities/agent-effects';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import type { EffectStore } from '../../../src/stores/effects/effect-store';

let attempts = 0;
/** An attempt outside a Temporal activity context: a holder and a signal of its own, no deadline. */
const anAttempt = (over: Partial<EffectAttempt> = {}): EffectAttempt => ({
  holder: `attempt-${++attempts}`,
  deadline: null,
  cancelled: new AbortController().signal,
  ...over,
});
const agentEffectActivity = (...a: [Parameters<typeof withSignal>[0], Parameters<typeof withSignal>[1]]) =>
  withSignal(...a, () => anAttempt());

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

  it("aborts the function's signal when Temporal cancels the attempt", async () => {
    const cancel = new AbortController();
    let seen: AbortSignal | undefined;
    const apply = withSignal(
      store,
      {
        publish: (_a, ctx) => {
          seen = ctx.signal;
          expect(ctx.signal.aborted).toBe(false);
          cancel.abort();
        },
      },
      () => anAttempt({ cancelled: cancel.signal }),
    );
    await apply(req());
    expect(seen?.aborted).toBe(true);
  });

  it('runs one attempt at a time: a later one waits for the earlier to return, then answers its delivery', async () => {
    let runs = 0;
    let finish: (v: string) => void = () => undefined;
    const clock = { now: Date.now, sleep: () => new Promise<void>((r) => setTimeout(r, 5)) };
    const first = withSignal(
      store,
      { publish: () => ((runs += 1), new Promise<string>((r) => (finish = r))) },
      () => anAttempt(),
      clock,
    )(req());
    await new Promise((r) => setTimeout(r, 20));
    let secondDone = false;
    const second = withSignal(
      store,
      { publish: () => ((runs += 1), 'second') },
      () => anAttempt(),
      clock,
    )(req()).finally(() => (secondDone = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(secondDone).toBe(false);
    finish('first');
    expect(await first).toEqual({ applied: true, result: 'first' });
    expect(await second).toEqual({ applied: false, result: 'first' });
    expect(runs).toBe(1);
    // Each attempt applied once: reading the delivery logs no third attempt.
    expect((await store.summary()).attempts).toBe(2);
  });

  it("a hung attempt's signal aborts at its deadline; the next attempt runs once its hold lapses", async () => {
    let now = 1_700_000_000_000;
    const clock = {
      now: () => now,
      sleep: async () => {
        now += 5_000;
        await new Promise((r) => setTimeout(r, 1));
      },
    };
    let hungSignal: AbortSignal | undefined;
    void withSignal(
      store,
      { publish: (_a, ctx) => ((hungSignal = ctx.signal), new Promise(() => undefined)) },
      () => anAttempt({ deadline: now + 30 }),
      clock,
    )(req());
    await new Promise((r) => setTimeout(r, 60));
    expect(hungSignal?.aborted).toBe(true);
    const seen: boolean[] = [];
    const before = now;
    const next = await withSignal(
      store,
      { publish: (_a, ctx) => (seen.push(ctx.redelivery), 'again') },
      () => anAttempt(),
      clock,
    )(req());
    expect(next).toEqual({ applied: true, result: 'again' });
    expect(seen).toEqual([true]);
    // It waited for the hung attempt's hold to lapse, not longer than one look past it.
    expect(now - before).toBeGreaterThanOrEqual(HOLD_MS);
    expect(now - before).toBeLessThanOrEqual(HOLD_MS + 5_000);
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
