import { inject } from 'vitest';
import type { TestStack } from './stack';

/** The environment of a `fairway worker` child that joins the test stack `s` (its queue, scheduler, stores, simulator, sink). */
export function workerEnv(s: TestStack, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TASK_QUEUE: s.config.temporal.taskQueue,
    SCHEDULER_WORKFLOW_ID: s.config.schedulerWorkflowId,
    DATA_DIR: s.config.dataDir,
    MODEL_BASE_URL: s.modelBaseUrl,
    EFFECT_SINK_URL: s.sink.url,
    LOG_LEVEL: 'warn',
    ...extra,
  };
}
