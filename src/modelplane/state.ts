import { DEFAULT_LATENCY, latencyMs, seededRandom } from './latency';
import type { LatencyModel } from './latency';
import type { RateLimitSnapshot } from '../activities/provider/rate-limit-headers';
import { FirstCallLog } from './first-calls';
import { RetryTracker } from './retry-tracker';
import { TokenBucket } from './token-bucket';

/** How a simulator starts: its quota, its seed and (optionally) its latency model and clock. */
export interface SimulatorOptions {
  /** Tokens per minute (prompt estimate + max_tokens of each call). */
  tpm: number;
  /** Requests per minute. */
  rpm: number;
  /** Seeds the latency jitter and completion ids, so runs repeat. */
  seed: number;
  latency?: Partial<LatencyModel>;
  /** Clock for the quota buckets, ms; tests pass a hand-driven one. */
  now?: () => number;
}

/** The simulator's verdict on one call. */
export type Decision =
  | { kind: 'ok'; id: string; delayMs: number; limits: RateLimitSnapshot }
  | { kind: 'throttled'; waitMs: number; exhausted: 'tokens' | 'requests'; limits: RateLimitSnapshot }
  | { kind: 'spend_cap'; limits: RateLimitSnapshot };

/** The body of `GET /admin/stats`. */
export interface SimulatorStats {
  calls: number;
  throttled: number;
  tokens: number;
  /** Calls that came back before the Retry-After their step was given (0 for a well-behaved client). */
  earlyRetries: number;
  quota: { tpm: number; rpm: number };
}

/** Quota buckets, the spend-cap switch and the counters of one simulator. */
export class SimulatorState {
  /** When on, every call is refused as `insufficient_quota` (a hard spend cap). */
  spendCap = false;
  /** Per-step Retry-After bookkeeping: counts retries that came too early. */
  readonly retries = new RetryTracker();
  /** First-call arrival per run id (priority measured where the work happens). */
  readonly firstCalls = new FirstCallLog();
  /** The simulator's clock, ms. */
  readonly now: () => number;
  private readonly tokens: TokenBucket;
  private readonly requests: TokenBucket;
  private readonly random: () => number;
  private readonly latency: LatencyModel;
  private readonly counters = { calls: 0, throttled: 0, tokens: 0 };
  private seq = 0;

  constructor(opts: SimulatorOptions) {
    this.now = opts.now ?? Date.now;
    this.tokens = new TokenBucket(opts.tpm, this.now());
    this.requests = new TokenBucket(opts.rpm, this.now());
    this.random = seededRandom(opts.seed);
    this.latency = { ...DEFAULT_LATENCY, ...opts.latency };
  }

  /** Decides a call costing `cost` tokens and, when it passes, takes its tokens and one request. */
  decide(cost: number): Decision {
    const now = this.now();
    if (this.spendCap) return { kind: 'spend_cap', limits: this.limits(now) };
    const tokenWait = this.tokens.waitMs(cost, now);
    const requestWait = this.requests.waitMs(1, now);
    if (tokenWait > 0 || requestWait > 0) {
      const exhausted = tokenWait >= requestWait ? 'tokens' : 'requests';
      return {
        kind: 'throttled',
        waitMs: Math.max(tokenWait, requestWait),
        exhausted,
        limits: this.limits(now),
      };
    }
    this.tokens.take(cost, now);
    this.requests.take(1, now);
    this.seq += 1;
    const id = `chatcmpl-sim${this.seq}-${Math.floor(this.random() * 0xffffffff)
      .toString(16)
      .padStart(8, '0')}`;
    const delayMs = latencyMs(this.latency, cost, this.random);
    return { kind: 'ok', id, delayMs, limits: this.limits(now) };
  }

  /** Counts a call once it is answered; `servedTokens` is 0 unless it succeeded. */
  answered(status: number, servedTokens: number): void {
    this.counters.calls += 1;
    if (status === 429) this.counters.throttled += 1;
    this.counters.tokens += servedTokens;
  }

  /** Changes the quota live; omitted fields stay. */
  setQuota(quota: { tpm?: number | undefined; rpm?: number | undefined }): void {
    const now = this.now();
    if (quota.tpm !== undefined) this.tokens.setLimit(quota.tpm, now);
    if (quota.rpm !== undefined) this.requests.setLimit(quota.rpm, now);
  }

  /** Counters since start and the quota now. */
  stats(): SimulatorStats {
    return {
      ...this.counters,
      earlyRetries: this.retries.earlyRetries,
      quota: { tpm: this.tokens.limit, rpm: this.requests.limit },
    };
  }

  private limits(now: number): RateLimitSnapshot {
    return {
      limitTokens: this.tokens.limit,
      remainingTokens: this.tokens.remaining(now),
      resetTokensMs: this.tokens.resetMs(now),
      limitRequests: this.requests.limit,
      remainingRequests: this.requests.remaining(now),
      resetRequestsMs: this.requests.resetMs(now),
    };
  }
}
