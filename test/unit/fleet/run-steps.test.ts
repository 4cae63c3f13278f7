import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { stepsFromHistory } from '../../../src/fleet/run-steps';

const payloads = (v: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(v)!] });
const time = (s: number) => ({ seconds: 1_780_000_000 + s, nanos: 0 });

describe("a run's steps from its history", () => {
  it('reads regular activities, local-activity markers, and leaves the fleet’s own activities out', () => {
    // Plain numbers where the decoded protobuf may hold Longs: the reader takes both.
    const events = [
      {
        eventId: 5,
        eventTime: time(0),
        activityTaskScheduledEventAttributes: { activityType: { name: 'notifyAdmissions' } },
      },
      {
        eventId: 7,
        eventTime: time(1),
        markerRecordedEventAttributes: {
          markerName: 'core_local_activity',
          details: {
            data: payloads({ activity_type: 'modelStep', seq: 1 }),
            result: payloads({ usedTokens: 42 }),
          },
        },
      },
      {
        eventId: 9,
        eventTime: time(2),
        activityTaskScheduledEventAttributes: {
          activityType: { name: 'modelCall' },
          input: payloads({ step: 2, request: { model: 'sim-large' } }),
        },
      },
      {
        eventId: 11,
        activityTaskCompletedEventAttributes: {
          scheduledEventId: 9,
          result: payloads({ completion: { usage: { totalTokens: 1200 } }, reservedTokens: 4000 }),
        },
      },
      {
        eventId: 12,
        eventTime: time(3),
        activityTaskScheduledEventAttributes: {
          activityType: { name: 'applyAgentEffect' },
          input: payloads({ name: 'publish' }),
        },
      },
      {
        eventId: 13,
        activityTaskCompletedEventAttributes: { scheduledEventId: 12, result: payloads({ applied: false }) },
      },
      {
        eventId: 14,
        eventTime: time(4),
        activityTaskScheduledEventAttributes: {
          activityType: { name: 'modelStep' },
          input: payloads({ step: 3 }),
        },
      },
      {
        eventId: 15,
        activityTaskFailedEventAttributes: {
          scheduledEventId: 14,
          failure: { message: 'Activity task failed', cause: { message: 'step 3 failed (failAtStep)' } },
        },
      },
      {
        eventId: 16,
        eventTime: time(5),
        activityTaskScheduledEventAttributes: {
          activityType: { name: 'modelStep' },
          input: payloads({ step: 4 }),
        },
      },
    ] as unknown as Parameters<typeof stepsFromHistory>[0];
    expect(stepsFromHistory(events)).toEqual([
      { kind: 'step', name: 'step 1', tokens: 42, outcome: 'ok', at: '2026-05-28T20:26:41.000Z' },
      { kind: 'model', name: 'sim-large', tokens: 1200, outcome: 'ok', at: '2026-05-28T20:26:42.000Z' },
      { kind: 'effect', name: 'publish', tokens: null, outcome: 'duplicate', at: '2026-05-28T20:26:43.000Z' },
      {
        kind: 'step',
        name: 'step 3',
        tokens: null,
        outcome: 'failed',
        error: 'step 3 failed (failAtStep)',
        at: '2026-05-28T20:26:44.000Z',
      },
      { kind: 'step', name: 'step 4', tokens: null, outcome: 'running', at: '2026-05-28T20:26:45.000Z' },
    ]);
  });
});
