/**
 * The `search` tool: the worker runs it as an activity on the tool's own task queue, so whatever
 * credential a real search API needs stays in the worker's process and never in a run's history.
 * Here it searches a small corpus, deterministically.
 */
export interface Hit {
  title: string;
  url: string;
  snippet: string;
}

const CORPUS: Hit[] = [
  {
    title: 'Rayleigh scattering',
    url: 'https://en.wikipedia.org/wiki/Rayleigh_scattering',
    snippet:
      'Shorter (blue) wavelengths of sunlight scatter far more strongly off air molecules than red ones.',
  },
  {
    title: 'Token bucket',
    url: 'https://en.wikipedia.org/wiki/Token_bucket',
    snippet: 'A bucket refills at a fixed rate; a request spends tokens, and waits when the bucket is empty.',
  },
  {
    title: 'Weighted fair queueing',
    url: 'https://en.wikipedia.org/wiki/Weighted_fair_queueing',
    snippet: 'Each flow gets a share of the link in proportion to its weight, whatever the others send.',
  },
  {
    title: 'Idempotence',
    url: 'https://en.wikipedia.org/wiki/Idempotence',
    snippet: 'An operation that has the same effect whether it is applied once or many times.',
  },
];

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z]{3,}/g) ?? []);

/** The corpus entries sharing the most words with `q`, best first (at most `limit`, default 2). */
export async function search(args: Record<string, unknown>): Promise<{ query: string; hits: Hit[] }> {
  const query = typeof args.q === 'string' ? args.q : '';
  const asked = words(query);
  const limit = typeof args.limit === 'number' ? args.limit : 2;
  const scored = CORPUS.map((hit) => ({
    hit,
    score: [...words(`${hit.title} ${hit.snippet}`)].filter((w) => asked.has(w)).length,
  }));
  const hits = scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((s) => s.hit);
  return { query, hits };
}
