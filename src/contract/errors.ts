/** Every error code the API answers with, and its HTTP status. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  tenant_disabled: 403,
  not_found: 404,
  method_not_allowed: 405,
  unknown_agent: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_conflict: 422,
  rate_limited: 429,
  queue_full: 429,
  wait_too_long: 429,
  budget_exhausted: 429,
  internal: 500,
  draining: 503,
  unavailable: 503,
  not_ready: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldIssue {
  path: string;
  message: string;
}

/** The one error type routes throw; the error middleware turns it into the JSON error shape. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }

  static invalid(details: FieldIssue[], message = 'The request is invalid; see details.'): ApiError {
    return new ApiError('invalid_request', message, details);
  }

  static notFound(what: string): ApiError {
    return new ApiError('not_found', `${what} was not found.`);
  }
}
