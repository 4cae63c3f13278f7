import type { ErrorCode } from '../contract/errors';
import type { RunDetails } from './types';

/**
 * What went wrong, in one code: the API's own codes (docs/api.md), `network` (no answer), `timeout`
 * (no answer within `timeoutMs`), `unexpected_response` (an answer that is not the API's JSON), and
 * the outcomes `result()` throws for: `run_failed`, `run_cancelled`, `run_rejected`, `wait_timeout`.
 */
export type FairwayErrorCode =
  | ErrorCode
  | 'network'
  | 'timeout'
  | 'unexpected_response'
  | 'run_failed'
  | 'run_cancelled'
  | 'run_rejected'
  | 'wait_timeout';

/** Every failure the client reports: an API error answer, no answer at all, or a run that did not complete. */
export class FairwayError extends Error {
  /** The HTTP status of the answer; 0 when there was none (network, timeout) or it is a run's outcome. */
  readonly status: number;
  readonly code: FairwayErrorCode;
  /** The answer's `error.details` (for 400: `[{ path, message }]`), or the run's own error. */
  readonly details: unknown;
  /** Seconds the API asked to wait before trying again (`Retry-After`), when it did. */
  readonly retryAfter: number | undefined;
  /** The run as last seen, for a run's outcome (`result()`). */
  readonly run: RunDetails | undefined;

  constructor(opts: {
    status: number;
    code: FairwayErrorCode;
    message: string;
    details?: unknown;
    retryAfter?: number | undefined;
    run?: RunDetails;
    cause?: unknown;
  }) {
    super(opts.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'FairwayError';
    this.status = opts.status;
    this.code = opts.code;
    this.details = opts.details;
    this.retryAfter = opts.retryAfter;
    this.run = opts.run;
  }
}

/** True for a FairwayError, optionally of one of `codes`. */
export function isFairwayError(err: unknown, ...codes: FairwayErrorCode[]): err is FairwayError {
  return err instanceof FairwayError && (codes.length === 0 || codes.includes(err.code));
}
