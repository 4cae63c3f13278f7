/** One page of a listing and the token of the next (null after the last). */
export interface Page<T> {
  items: T[];
  next: Uint8Array | null;
}

/**
 * Reads listings (one per query) at most `maxPages` pages per call, each call resuming where the
 * previous one stopped and starting over after the last page, so every item of a listing longer than
 * `maxPages` pages is visited within a few calls. A query that fails starts over next time (its token
 * may be what failed); a query not asked for is forgotten.
 */
export class ResumingPager<T> {
  private tokens = new Map<string, Uint8Array>();

  constructor(
    private readonly listPage: (query: string, token: Uint8Array | null) => Promise<Page<T>>,
    private readonly maxPages: number,
  ) {}

  async read(queries: string[], visit: (items: T[]) => Promise<void>): Promise<void> {
    const kept = new Map<string, Uint8Array>();
    try {
      for (const query of queries) {
        let token = this.tokens.get(query) ?? null;
        this.tokens.delete(query);
        for (let page = 0; page < this.maxPages; page++) {
          const res = await this.listPage(query, token);
          await visit(res.items);
          token = res.next;
          if (!token) break;
        }
        if (token) kept.set(query, token);
      }
    } finally {
      // Queries not reached keep their tokens; the failed one (deleted above) starts over.
      for (const [q, t] of this.tokens) if (queries.includes(q)) kept.set(q, t);
      this.tokens = kept;
    }
  }
}
