import express, { type Request, type RequestHandler } from 'express';
import { ApiError } from '../../contract/errors';
import { assertJsonDepth } from './json-depth';

/**
 * Body limits: 1 MB for everything but batches and batch parts, whose items need room. A one-request
 * batch's items must also fit one Temporal payload once compact (MAX_START_ARGUMENT_BYTES, 1.5 MiB):
 * 4 MB leaves room for whitespace. A part's items are stored, never sent to Temporal together.
 */
export const BODY_LIMIT = '1mb';
export const BATCH_BODY_LIMIT = '4mb';

/** `POST /v1/batches` and `POST /v1/batches/:batchId/items` take the larger limit. */
const BATCH_BODY_PATH = /^\/v1\/batches(\/[^/]+\/items)?\/*$/i;

/** True when the request carries body bytes (a chunked body, or a Content-Length above 0). */
function carriesBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? '0');
  return !Number.isFinite(length) || length > 0;
}

/**
 * The charset a Content-Type names when it is not UTF-8, or undefined (none named means UTF-8).
 * JSON is UTF-8 (RFC 8259); the depth guard scans UTF-8 bytes, so no other encoding is parsed.
 */
export function nonUtf8Charset(contentType: string | undefined): string | undefined {
  for (const param of (contentType ?? '').split(';').slice(1)) {
    const [name = '', value = ''] = param.split('=', 2).map((p) => p.trim());
    if (name.toLowerCase() !== 'charset') continue;
    const charset = value.replace(/^"(.*)"$/, '$1').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return charset;
  }
  return undefined;
}

/** The 415 of a JSON body in a charset other than UTF-8. */
export const notUtf8 = (charset: string) =>
  new ApiError('unsupported_media_type', `Send JSON as UTF-8 (charset ${charset} is not accepted).`, {
    charset,
  });

/**
 * JSON bodies only, in UTF-8, nested at most MAX_JSON_DEPTH levels; the size limit depends on the route. A body in any other media type is refused with 415
 * (it is never parsed as "no body" with defaults applied). Errors go to the one error middleware.
 */
export function jsonBody(): RequestHandler {
  // The depth is checked on the raw bytes, before they are parsed.
  const verify = (_req: unknown, _res: unknown, raw: Buffer) => assertJsonDepth(raw);
  const small = express.json({ limit: BODY_LIMIT, verify });
  const large = express.json({ limit: BATCH_BODY_LIMIT, verify });
  return (req, res, next) => {
    if (carriesBody(req) && req.is('application/json') !== 'application/json') {
      next(
        new ApiError(
          'unsupported_media_type',
          'Send the body as JSON, with "Content-Type: application/json".',
        ),
      );
      return;
    }
    const charset = carriesBody(req) ? nonUtf8Charset(req.get('content-type')) : undefined;
    if (charset !== undefined) {
      next(notUtf8(charset));
      return;
    }
    const isBatch = req.method === 'POST' && BATCH_BODY_PATH.test(`${req.baseUrl}${req.path}`);
    (isBatch ? large : small)(req, res, next);
  };
}
