import { CALL_METADATA_KEY } from './provider/call-key';

/** What the provider says it served for one call: its usage, or that it never served it. */
export type ServedUsage = { served: true; tokens: number } | { served: false };

/**
 * Where a provisional charge is settled: the provider's own record of what it served, per call id
 * (the call intent's key, sent with the call). `null`: it cannot tell now (ask again later).
 * A deployment whose provider or gateway offers no per-call lookup has none, and a call of unknown
 * outcome stays charged its worst case (docs/operating.md, "Reconciling with the bill").
 */
export interface UsageSource {
  lookup(callId: string): Promise<ServedUsage | null>;
}

interface StoredCompletionList {
  data?: { usage?: { total_tokens?: unknown } | null }[];
}

/**
 * OpenAI's stored chat completions: calls sent with `store: true` and `metadata.fairway_call` are
 * listed by `GET /v1/chat/completions?metadata[fairway_call]=<id>`, each with its `usage`. An empty
 * list is a call never served (the lookup waits until the provider would have stored it); an error
 * answer or a completion without usage is "cannot tell".
 */
export function openAiStoredCompletions(opts: {
  baseUrl: string;
  apiKey?: string | undefined;
  fetchImpl?: typeof fetch;
  timeoutMs?: number;
}): UsageSource {
  const fetchImpl = opts.fetchImpl ?? globalThis.fetch;
  const base = opts.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const headers: Record<string, string> = opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {};
  return {
    async lookup(callId) {
      const q = new URLSearchParams({ [`metadata[${CALL_METADATA_KEY}]`]: callId, limit: '10' });
      const res = await fetchImpl(`${base}/v1/chat/completions?${q.toString()}`, {
        headers,
        signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
      });
      if (!res.ok) return null;
      const body = (await res.json()) as StoredCompletionList;
      if (!Array.isArray(body.data)) return null;
      if (body.data.length === 0) return { served: false };
      let tokens = 0;
      for (const c of body.data) {
        const t = c.usage?.total_tokens;
        if (typeof t !== 'number' || !Number.isFinite(t) || t < 0) return null;
        tokens += Math.ceil(t);
      }
      return { served: true, tokens };
    },
  };
}
