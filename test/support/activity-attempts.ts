import type { TestStack } from './stack';

/**
 * The attempt numbers of the run's `activityType` activities as its history records them: one per
 * activity that started, the attempt it ended on (Temporal records only the last attempt's start).
 */
export async function activityAttempts(s: TestStack, runId: string, activityType: string): Promise<number[]> {
  const events = (await s.client.workflow.getHandle(runId).fetchHistory()).events ?? [];
  return events.flatMap((e) => {
    const started = e.activityTaskStartedEventAttributes;
    if (!started) return [];
    const scheduled = events.find((x) => x.eventId?.equals(started.scheduledEventId!));
    return scheduled?.activityTaskScheduledEventAttributes?.activityType?.name === activityType
      ? [started.attempt ?? 0]
      : [];
  });
}
