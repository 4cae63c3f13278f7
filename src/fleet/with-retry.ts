import { WorkflowUpdateFailedError } from '@temporalio/client';

/**
 * Retries a scheduler message through transient faults (the chain continuing-as-new answers
 * "closing" for a moment). Safe because every scheduler message is idempotent.
 */
export async function withRetry<T>(fn: () => Promise<T>, attempts = 20): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError || i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** i)));
    }
  }
}
