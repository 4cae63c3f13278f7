import { GracefulShutdownPeriodExpiredError } from '@temporalio/worker';
import type { Worker, WorkerOptions } from '@temporalio/worker';

/**
 * A stopping worker's two bounds: the grace lets in-flight steps finish, then they are cancelled; a
 * step that ignores its cancellation (a local activity in a long backoff, a stuck socket) would hold
 * the process forever, so after `forceSeconds` more the worker stops anyway. Its abandoned attempts
 * time out on the server and are retried by another worker.
 */
export function shutdownOptions(
  graceSeconds: number,
  forceSeconds: number,
): Pick<WorkerOptions, 'shutdownGraceTime' | 'shutdownForceTime'> {
  return { shutdownGraceTime: `${graceSeconds}s`, shutdownForceTime: `${graceSeconds + forceSeconds}s` };
}

/** `worker.run()`, where reaching the force bound is a warning, not a crash of the process. */
export function runWorker(worker: Worker, warn: (msg: string) => void): Promise<void> {
  return worker.run().catch((err: unknown) => {
    if (!(err instanceof GracefulShutdownPeriodExpiredError)) throw err;
    warn(
      'worker did not drain within its shutdown bounds: stopped anyway (in-flight attempts will be retried)',
    );
  });
}
