import { FairwayError } from './errors';

export interface ClientOptions {
  /** The API's base URL, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** A tenant's API key (or the admin token). */
  apiKey: string;
  /** The fetch to call (default: the global one); tests and proxies hand in their own. */
  fetch?: typeof fetch;
  /** How long one HTTP attempt may take before it fails with `timeout` (default 30 s). */
  timeoutMs?: number;
  /** Further attempts after a 429, a 503 or no answer, for requests safe to repeat (default 3). */
  maxRetries?: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown at once (default 30 s). */
  maxRetryAfterSeconds?: number;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body and headers instead of JSON (a signed event's exact bytes). */
  raw?: { body: string; headers: Record<string, string> };
  query?: Record<string, string | number | undefined>;
  idempotencyKey?: string;
  /** True: send no bearer token (a signed delivery carries its own credential). */
  anonymous?: boolean;
  /**
   * The request may be sent again after a 503 or no answer (it has an idempotency key, or repeating it
   * changes nothing). GETs always may; a 429 is a refusal that left nothing behind, so it is always retried.
   */
  repeatable?: boolean;
}

export interface Transport {
  request<T>(method: string, path: string, opts?: RequestOptions): Promise<T>;
}

const BACKOFF_MS = 250;
const BACKOFF_CAP_MS = 5_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `Retry-After` as seconds (an integer or an HTTP date), else undefined. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

async function errorOf(res: Response, method: string, path: string): Promise<FairwayError> {
  const retryAfter = retryAfterSeconds(res.headers.get('retry-after'));
  const text = await res.text().catch(() => '');
  let parsed: { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
  try {
    parsed = text ? (JSON.parse(text) as typeof parsed) : undefined;
  } catch {
    parsed = undefined;
  }
  const e = parsed?.error;
  if (e && typeof e.code === 'string' && typeof e.message === 'string') {
    return new FairwayError({
      status: res.status,
      code: e.code as FairwayError['code'],
      message: e.message,
      details: e.details,
      retryAfter,
    });
  }
  return new FairwayError({
    status: res.status,
    code: 'unexpected_response',
    message: `${method} ${path} answered HTTP ${res.status} without the API's JSON error.`,
    details: text.slice(0, 500),
    retryAfter,
  });
}

/** A 2xx answer's JSON body (undefined when empty, as a 204's is). */
async function bodyOf<T>(res: Response, method: string, path: string): Promise<T> {
  const text = await res.text();
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new FairwayError({
      status: res.status,
      code: 'unexpected_response',
      message: `${method} ${path} answered HTTP ${res.status} with a body that is not JSON.`,
      details: text.slice(0, 500),
      cause: err,
    });
  }
}

function url(base: string, path: string, query: RequestOptions['query']): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) q.set(k, String(v));
  const qs = q.toString();
  return `${base.replace(/\/+$/, '')}${path}${qs ? `?${qs}` : ''}`;
}

/**
 * JSON over HTTP with the API's error shape mapped to FairwayError, one timeout per attempt, and
 * bounded retries: after a 429 (always: nothing was done) or a 503 or no answer (only when the request
 * is repeatable), waiting `Retry-After` when the API gave one, else a capped exponential backoff.
 */
export function createTransport(opts: ClientOptions): Transport {
  const doFetch = opts.fetch ?? globalThis.fetch;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxRetries = opts.maxRetries ?? 3;
  const maxRetryAfter = opts.maxRetryAfterSeconds ?? 30;

  const once = async (method: string, path: string, o: RequestOptions): Promise<Response> => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (!o.anonymous) headers.authorization = `Bearer ${opts.apiKey}`;
    if (o.idempotencyKey !== undefined) headers['idempotency-key'] = o.idempotencyKey;
    let body: string | undefined;
    if (o.raw) {
      Object.assign(headers, o.raw.headers);
      body = o.raw.body;
    } else if (o.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.body);
    }
    try {
      return await doFetch(url(opts.baseUrl, path, o.query), {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new FairwayError({
        status: 0,
        code: timedOut ? 'timeout' : 'network',
        message: timedOut
          ? `${method} ${path} got no answer within ${timeoutMs} ms.`
          : `${method} ${path} could not reach ${opts.baseUrl}: ${err instanceof Error ? err.message : String(err)}`,
        cause: err,
      });
    }
  };

  return {
    async request<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
      const repeatable = method === 'GET' || o.repeatable === true;
      for (let attempt = 0; ; attempt++) {
        let failure: FairwayError;
        try {
          const res = await once(method, path, o);
          if (res.ok) return await bodyOf<T>(res, method, path);
          failure = await errorOf(res, method, path);
        } catch (err) {
          if (!(err instanceof FairwayError)) throw err;
          failure = err;
        }
        const retryable =
          failure.status === 429 ||
          (repeatable && (failure.status === 503 || failure.status === 0)) ||
          // The same idempotency key is still being served by another request: it answers soon.
          (failure.status === 409 && o.idempotencyKey !== undefined && failure.retryAfter !== undefined);
        const wait = failure.retryAfter;
        if (!retryable || attempt >= maxRetries || (wait !== undefined && wait > maxRetryAfter))
          throw failure;
        const backoff = Math.min(BACKOFF_CAP_MS, BACKOFF_MS * 2 ** attempt);
        await sleep(wait !== undefined ? wait * 1000 : backoff / 2 + Math.random() * (backoff / 2));
      }
    },
  };
}
