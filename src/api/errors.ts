import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';

/** Every error code the API answers with, and its HTTP status. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  unknown_agent: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_conflict: 422,
  rate_limited: 429,
  queue_full: 429,
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

/** Body-parser errors carry a `type`; map the ones a client causes, never leak the rest. */
function fromBodyParser(err: unknown): ApiError | undefined {
  if (typeof err !== 'object' || err === null || !('type' in err) || typeof err.type !== 'string')
    return undefined;
  switch (err.type) {
    case 'entity.parse.failed':
      return new ApiError('invalid_request', 'The body is not valid JSON.');
    case 'entity.too.large':
      return new ApiError('payload_too_large', 'The body is larger than this endpoint accepts.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('unsupported_media_type', 'Send JSON encoded as UTF-8.');
    case 'request.aborted':
    case 'request.size.invalid':
      return new ApiError('invalid_request', 'The body was cut short or its length is wrong.');
    default:
      return undefined;
  }
}

export function toApiError(err: unknown): ApiError | undefined {
  return err instanceof ApiError ? err : fromBodyParser(err);
}

/** Unknown routes: JSON 404, never the framework's HTML page. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ApiError('not_found', `No route ${req.method} ${req.path}.`));
};

/** The single error middleware: ApiError and body-parser errors as they are, anything else a logged 500. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    let apiError = toApiError(err);
    if (!apiError) {
      log.error({ err, method: req.method, path: req.path }, 'unhandled error in request');
      apiError = new ApiError('internal', 'Something went wrong on our side; it has been logged.');
    }
    if (apiError.retryAfterSeconds !== undefined) {
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(apiError.retryAfterSeconds))));
    }
    if (apiError.code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
    const body: { code: ErrorCode; message: string; details?: unknown } = {
      code: apiError.code,
      message: apiError.message,
    };
    if (apiError.details !== undefined) body.details = apiError.details;
    res.status(apiError.status).json({ error: body });
  };
}
