import type { Pool } from 'pg';
import { refusal } from './rate-limits';
import type { BucketRule, RateLimitStore, TakeMode, TakeResult } from './rate-limits';

/** A bucket's tokens refilled up to now: $2 rate, $3 burst, `now` the placeholder of the time. */
const refilled = (now: string) =>
  `LEAST($3::float8, tokens + GREATEST(0, ${now}::bigint - at) / 1000.0 * $2::float8)`;

/**
 * One take in one statement: the bucket's row is locked (`FOR UPDATE` reads its newest version
 * after any concurrent take commits), refilled and charged. $1 key, $4 cost, $6 true to charge
 * whatever the bucket holds.
 */
const TAKE = `
  WITH prev AS (SELECT key, at, ${refilled('$5')} AS refilled FROM rate_buckets WHERE key = $1 FOR UPDATE)
  UPDATE rate_buckets b
  SET tokens = CASE WHEN $6::boolean OR prev.refilled >= LEAST(1, $4::float8)
                    THEN prev.refilled - $4::float8 ELSE prev.refilled END,
      at = GREATEST(prev.at, $5::bigint)
  FROM prev WHERE b.key = prev.key
  RETURNING prev.refilled AS refilled`;

/** $1 key, $4 now. */
const PEEK = `SELECT ${refilled('$4')} AS refilled FROM rate_buckets WHERE key = $1`;

/** Token buckets in PostgreSQL: every API process on every host draws on the same rows. */
export class PgRateLimitStore implements RateLimitStore {
  constructor(private readonly pool: Pool) {}

  async take(
    key: string,
    cost: number,
    rule: BucketRule,
    now: number,
    mode: TakeMode = 'take',
  ): Promise<TakeResult> {
    if (rule.ratePerSecond <= 0) return { ok: true };
    const tokens =
      mode === 'peek' ? await this.peek(key, rule, now) : await this.charge(key, cost, rule, now, mode);
    return tokens >= Math.min(1, cost) ? { ok: true } : refusal(tokens, rule);
  }

  /** The bucket's tokens now (a full bucket when it has no row yet). */
  private async peek(key: string, rule: BucketRule, now: number): Promise<number> {
    const r = await this.pool.query<{ refilled: number }>(PEEK, [key, rule.ratePerSecond, rule.burst, now]);
    return Number(r.rows[0]?.refilled ?? rule.burst);
  }

  /** Takes or charges; the tokens the bucket held before. A bucket without a row gets a full one first. */
  private async charge(
    key: string,
    cost: number,
    rule: BucketRule,
    now: number,
    mode: TakeMode,
  ): Promise<number> {
    const params = [key, rule.ratePerSecond, rule.burst, cost, now, mode === 'charge'];
    let r = await this.pool.query<{ refilled: number }>(TAKE, params);
    if (r.rowCount === 0) {
      await this.pool.query(
        'INSERT INTO rate_buckets (key, tokens, at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING',
        [key, rule.burst, now],
      );
      r = await this.pool.query<{ refilled: number }>(TAKE, params);
    }
    return Number(r.rows[0]?.refilled ?? rule.burst);
  }
}
