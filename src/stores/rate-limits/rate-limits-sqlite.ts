import type Database from 'better-sqlite3';
import { takeFrom } from './rate-limits';
import type { BucketRule, BucketState, RateLimitStore, TakeMode, TakeResult } from './rate-limits';

/** Token buckets in the SQLite API store: the processes of a host share them through the file. */
export class SqliteRateLimitStore implements RateLimitStore {
  private readonly take1: (
    key: string,
    cost: number,
    rule: BucketRule,
    now: number,
    mode: TakeMode,
  ) => TakeResult;

  constructor(db: Database.Database) {
    const get = db.prepare<[string], BucketState>('SELECT tokens, at FROM rate_buckets WHERE key = ?');
    const put = db.prepare(
      `INSERT INTO rate_buckets (key, tokens, at) VALUES (@key, @tokens, @at)
       ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, at = excluded.at`,
    );
    const tx = db.transaction(
      (key: string, cost: number, rule: BucketRule, now: number, mode: TakeMode): TakeResult => {
        const { next, result } = takeFrom(get.get(key), rule, cost, now, mode);
        if (mode !== 'peek') put.run({ key, tokens: next.tokens, at: next.at });
        return result;
      },
    );
    // IMMEDIATE: the write lock is taken before the read, so two processes never read the same tokens.
    this.take1 = (key, cost, rule, now, mode) => tx.immediate(key, cost, rule, now, mode);
  }

  async take(
    key: string,
    cost: number,
    rule: BucketRule,
    now: number,
    mode: TakeMode = 'take',
  ): Promise<TakeResult> {
    if (rule.ratePerSecond <= 0) return { ok: true };
    return this.take1(key, cost, rule, now, mode);
  }
}
