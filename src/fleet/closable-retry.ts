import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

/**
 * The SDK's gRPC retry, made safe to close. A retry the SDK scheduled fires on a timer, and throws
 * "Channel has been shut down" (uncaught) if the connection was closed meanwhile: it happened when a
 * stack stopped while Temporal was restarting. `settle()` stops new retries and waits until every
 * scheduled one has fired; close the connection after it.
 */
export function closableRetry(initialIntervalMs: number): {
  interceptor: ReturnType<typeof makeGrpcRetryInterceptor>;
  settle(): Promise<void>;
} {
  const base = defaultGrpcRetryOptions({ initialIntervalMs: () => initialIntervalMs });
  let closing = false;
  let lastFireAt = 0;
  const interceptor = makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) => !closing && base.retryableDecider(attempt, status),
    delayFunction: (attempt, status) => {
      const ms = base.delayFunction(attempt, status);
      lastFireAt = Math.max(lastFireAt, Date.now() + ms);
      return ms;
    },
  });
  return {
    interceptor,
    async settle() {
      closing = true;
      const wait = lastFireAt - Date.now() + 50;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    },
  };
}
