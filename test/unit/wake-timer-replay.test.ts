import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowsPath } from '../../src/fleet/worker';

const fixture = path.join(__dirname, '..', 'fixtures', 'histories', 'scheduler-wake-with-updates.pb');

/**
 * A scheduler task that carried ten topUp updates and the fire of its wake-up timer (recorded on a
 * dev server whose worker was paused while they came). A worker can miss that fire (it took the
 * event as already applied, after speculative update tasks it completed were lost) while a replay
 * applies it: the scheduler must start the same timers either way, or its replay fails with
 * "Timer machine does not handle this event: WorkflowExecutionUpdateCompleted".
 */
describe('the wake-up timer does not depend on its fire being seen', () => {
  const history = temporal.api.history.v1.History.decode(readFileSync(fixture));

  it('the fixture has a task with updates and the wake-up timer fire', () => {
    const events = history.events ?? [];
    const fired = events.filter((e) => Number(e.timerFiredEventAttributes?.timerId ?? 0) >= 7);
    expect(fired.length).toBeGreaterThan(0);
    expect(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length).toBeGreaterThan(5);
  });

  it('replays with the fire withheld from the activation that carries the updates', async () => {
    await expect(
      Worker.runReplayHistory(
        {
          workflowsPath,
          interceptors: { workflowModules: [path.join(__dirname, '..', 'support', 'withhold-wake-fire.ts')] },
          replayName: 'withheld-fire',
        },
        history,
      ),
    ).resolves.toBeUndefined();
  }, 60_000);
});
