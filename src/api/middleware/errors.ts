import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../../contract/errors';
import type { ErrorCode } from '../../contract/errors';
import { matchRoute } from '../openapi/route-match';

/** Body-parser errors carry a `type`; map the ones a client causes, never leak the rest. */
function fromBodyParser(err: unknown): ApiError | undefined {
  if (typeof err !== 'object' || err === null || !('type' in err) || typeof err.type !== 'string')
    return undefined;
  switch (err.type) {
    case 'entity.parse.failed':
      return new ApiError('invalid_request', 'The body is not valid JSON.');
    case 'entity.too.large': {
      const limit = (err as { limit?: unknown }).limit;
      return typeof limit === 'number'
        ? new ApiError(
            'payload_too_large',
            `The body is larger than this endpoint accepts: the limit is ${limit} bytes.`,
            { limitBytes: limit },
          )
        : new ApiError('payload_too_large', 'The body is larger than this endpoint accepts.');
    }
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

/** Other errors the framework raises for a bad request (e.g. a path with malformed percent-encoding). */
function fromFramework(err: unknown): ApiError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const status = (err as { status?: unknown }).status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (err instanceof URIError) {
    return new ApiError('invalid_request', 'The path has malformed percent-encoding.');
  }
  switch (status) {
    case 413:
      return new ApiError('payload_too_large', 'The body is larger than this endpoint accepts.');
    case 415:
      return new ApiError('unsupported_media_type', 'Send the body as JSON encoded as UTF-8.');
    default:
      return new ApiError('invalid_request', 'The request is malformed.');
  }
}

export function toApiError(err: unknown): ApiError | undefined {
  return err instanceof ApiError ? err : (fromBodyParser(err) ?? fromFramework(err));
}

/**
 * Unknown routes: JSON 404, never the framework's HTML page. A known path asked with a method it does
 * not serve is 405 with the Allow header (RFC 9110), from the OpenAPI document's methods for the path.
 */
export const notFoundHandler: RequestHandler = (req, res, next) => {
  const route = matchRoute(req.path);
  if (route && !route.methods.includes(req.method)) {
    res.setHeader('Allow', route.methods.join(', '));
    next(new ApiError('method_not_allowed', `${req.method} is not served on ${route.template}.`));
    return;
  }
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
    if (apiError && !(err instanceof ApiError)) {
      // A client's mistake caught by the framework: one warn line, no stack.
      log.warn({ method: req.method, path: req.path, code: apiError.code }, apiError.message);
    }
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
