import type { Priority } from '../scheduler/types';

/**
 * Temporal task-queue priority per lane (1 is served first, 3 is the default, 5 last). A run's
 * workflow starts with its lane's key and its activities inherit it, so an admitted interactive run's
 * workflow tasks and steps are not queued behind a batch backlog's. The scheduler itself runs at 1.
 */
export const PRIORITY_KEY: Record<Priority, number> = { interactive: 1, standard: 3, batch: 5 };
export const SCHEDULER_PRIORITY_KEY = 1;
