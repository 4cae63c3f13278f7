/** A failure the command reports in one line, with the process's exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * Exit codes of `fairway` (docs/operating.md): 0 ok, 1 the API failed or is unreachable, 2 usage,
 * 3 auth, 4 not found, 5 the run (`runs wait`) ended other than completed, 6 a wait timed out.
 */
export const EXIT = { ok: 0, api: 1, usage: 2, auth: 3, notFound: 4, runFailed: 5, timeout: 6 } as const;

export interface ApiClient {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  delete<T>(path: string): Promise<T>;
}

/** Calls against the API (admin token or tenant key); every failure becomes a CliError with a readable message. */
export function apiClient(url: string, token: string | undefined, timeoutMs = 15_000): ApiClient {
  const call = async (method: string, path: string, body?: unknown) => {
    if (!token) {
      throw new CliError(
        'No token: pass --token, set FAIRWAY_ADMIN_TOKEN (or ADMIN_TOKEN), or choose a profile with --profile.',
        EXIT.auth,
      );
    }
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const cause =
        err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      throw new CliError(
        `Cannot reach the Fairway API at ${url} (${cause}). Is it running? Pass --url or set FAIRWAY_URL.`,
        EXIT.api,
      );
    }
    const text = await res.text();
    let json: { error?: { code: string; message: string } } | null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (res.ok) return json as never;
    const detail = json?.error ? `${json.error.code}: ${json.error.message}` : `HTTP ${res.status}`;
    if (res.status === 401 || res.status === 403) {
      throw new CliError(`The API refused the token (${detail}).`, EXIT.auth);
    }
    if (res.status === 404) throw new CliError(detail, EXIT.notFound);
    throw new CliError(`${method} ${path} failed: ${detail}`, EXIT.api);
  };
  return {
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body ?? {}),
    put: (path, body) => call('PUT', path, body),
    delete: (path) => call('DELETE', path),
  };
}
