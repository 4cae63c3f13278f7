import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowInterceptorModules, workflowsPath } from '../../src/fleet/worker';
import { PATCH_IDS } from '../../src/workflows/patches';

const dir = path.join(__dirname, '..', 'fixtures', 'histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.pb'));

/**
 * Replays recorded histories (`npm run fixtures`) against today's workflow code: a change that
 * would break running workflows (a non-determinism) fails here, before it reaches a fleet.
 */
describe('replay of recorded histories', () => {
  it('has fixtures for the scheduler and run workflows', () => {
    expect(files.some((f) => f.startsWith('scheduler'))).toBe(true);
    expect(files.filter((f) => f.startsWith('run-')).length).toBeGreaterThanOrEqual(4);
  });

  it('records no patch marker the registry does not hold (a retired patch means re-recorded fixtures)', () => {
    const markers = files.flatMap((f) =>
      (temporal.api.history.v1.History.decode(readFileSync(path.join(dir, f))).events ?? []).flatMap((e) => {
        const m = e.markerRecordedEventAttributes;
        const data =
          m?.markerName === 'core_patch' ? m.details?.['patch-data']?.payloads?.[0]?.data : undefined;
        return data ? [`${f}: ${(JSON.parse(Buffer.from(data).toString()) as { id: string }).id}`] : [];
      }),
    );
    expect(markers.filter((m) => !PATCH_IDS.includes(m.split(': ')[1]!))).toEqual([]);
  });

  it('replays every history with 0 determinism violations', async () => {
    const histories = files.map((f) => ({
      workflowId: f.replace(/\.pb$/, ''),
      history: temporal.api.history.v1.History.decode(readFileSync(path.join(dir, f))),
    }));
    const failures: string[] = [];
    // As workers bundle them: with the tracing interceptors (inert for histories started untraced).
    const options = { workflowsPath, interceptors: { workflowModules: workflowInterceptorModules } };
    for await (const r of Worker.runReplayHistories(options, histories)) {
      if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('replays a traced run without the tracing interceptors: they add no command', async () => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, 'run-traced.pb')));
    const traced = (history.events ?? []).some(
      (e) => e.workflowExecutionStartedEventAttributes?.header?.fields?.['_tracer-data'] !== undefined,
    );
    expect(traced, 'run-traced.pb started with a trace header').toBe(true);
    await Worker.runReplayHistory({ workflowsPath }, history, 'run-traced');
  }, 120_000);
});
