import { DEFAULT_LATENCY, latencyMs, seededRandom } from './latency';
import type { LatencyModel } from './latency';
import { anthropicRateLimitHeaders, rateLimitHeaders } from '../../activities/provider/rate-limit-headers';
import type { RateLimitSnapshot } from '../../activities/provider/rate-limit-headers';
import { CallLog } from './call-log';
import { UsageLog } from './usage-log';
import { FirstCallLog } from './first-calls';
import { TraceLog } from './trace-log';
import { RetryTracker } from './retry-tracker';
import { CalendarWindow, TokenBucket } from './token-bucket';
import type { QuotaMeter } from './token-bucket';

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
  /** Rate-limit headers in OpenAI's dialect (default) or Anthropic's. */
  headerDialect?: 'openai' | 'anthropic';
  /** Anthropic mode: separate input and output token quotas per minute (default: `tpm` each). */
  inputTpm?: number;
  outputTpm?: number;
  /** Where rate-limit 429s state their wait (default `standard`); see {@link WaitSignal}. */
  waitSignal?: WaitSignal;
  /**
   * How the quotas count (default `rolling`): a continuously refilling bucket, or `calendar`, the
   * whole allowance back at each minute of the clock.
   */
  window?: QuotaWindow;
  /**
   * A gateway that holds a call over the limit instead of refusing it (LiteLLM with its retries on):
   * up to this many ms, then it answers the call once its quota allows, or 429 when the hold runs
   * out. 0 (default): refused at once.
   */
  holdMs?: number;
  /** Whether answers carry rate-limit headers (default true); false plays a gateway that strips them. */
  rateLimitHeaders?: boolean;
}

/** How a quota counts: a rolling bucket or calendar minutes. */
export type QuotaWindow = 'rolling' | 'calendar';

/**
 * Where a rate-limit 429 states its wait: `standard` (the dialect's own headers, and the wait in
 * the error text), `vendor-header` (only `llm_provider-retry-after` in whole seconds, as LiteLLM
 * sends it: no `retry-after`, no rate-limit or reset headers, no wait in the text) or `body` (only
 * in the error text, "Please try again in 1.2s": no wait or rate-limit headers).
 */
export type WaitSignal = 'standard' | 'vendor-header' | 'body';

/** A call's cost: prompt (input) and completion (output) tokens. */
export interface CallCost {
  input: number;
  output: number;
}

/** A scripted answer for the next calls (drills): a 429 with exactly these raw header values. */
export interface InjectedFault {
  /** Raw `retry-after` value, sent as is (e.g. "86400", "soon"). */
  retryAfter?: string | undefined;
  /** Raw reset value for the token bucket, sent as is in the dialect's reset header. */
  resetTokens?: string | undefined;
  /** How many calls get this answer. */
  times: number;
}

/** The simulator's verdict on one call. */
export type Decision =
  | { kind: 'ok'; id: string; delayMs: number; headers: Record<string, string> }
  | { kind: 'throttled'; waitMs: number; exhausted: string; headers: Record<string, string> }
  | { kind: 'injected'; headers: Record<string, string> }
  | { kind: 'spend_cap'; headers: Record<string, string> }
  | { kind: 'key_refused'; status: 401 | 403 | 500 };

/** The body of `GET /admin/stats`. */
export interface SimulatorStats {
  calls: number;
  throttled: number;
  /** Calls refused for the key (401, 403) or answered 500 by `POST /admin/rejected-key`. */
  refused: number;
  tokens: number;
  /** Calls accepted and dropped without an answer (`POST /admin/drops`). */
  dropped: number;
  /** Calls that came back before the Retry-After their step was given (0 for a well-behaved client). */
  earlyRetries: number;
  quota: { tpm: number; rpm: number };
  /** Tokens served (billed) per tenant, as the calls named it (`user` or the tenant header); "" when none did. */
  bill: Record<string, number>;
  /**
   * Of `bill`, the tokens of calls served for a call key (run and step) already served once: a step
   * that called again although its earlier call was billed (e.g. a retry after its worker died). The
   * provider bills both; the caller's ledger has both only if the first call's charge got out.
   */
  billedAgain: Record<string, number>;
  /**
   * Per tenant, the calls billed whose caller went away before their answer left (a worker killed
   * mid-call): what each was billed, by call key (the first 500 keys).
   */
  cut: Record<string, CutCalls>;
  headerDialect: 'openai' | 'anthropic';
  waitSignal: WaitSignal;
  window: QuotaWindow;
  /** The longest a call over the limit is held now (ms), and how many calls were held so far. */
  holdMs: number;
  held: number;
  rateLimitHeaders: boolean;
  /** The simulated other consumer of the same account, when one runs. */
  bystander: BystanderStats | null;
}

/** Billed calls whose answer nobody read. */
export interface CutCalls {
  calls: number;
  tokens: number;
  /** `[call key, tokens billed]`, in the order they were cut. */
  keys: [string, number][];
}

export interface BystanderStats {
  tpm: number;
  calls: number;
  throttled: number;
  tokens: number;
}

/** Quota buckets, the spend-cap switch and the counters of one simulator. */
export class SimulatorState {
  /** When on, every call is refused as `insufficient_quota` (a hard spend cap). */
  spendCap = false;
  /** Tenants whose calls are refused as `insufficient_quota` (their own spend cap). */
  readonly spendCapTenants = new Set<string>();
  /** When set, every call is answered with this status (`POST /admin/rejected-key`), before any quota. */
  rejectedKey: 401 | 403 | 500 | null = null;
  /** Scripted 429s, served to the next calls first. */
  readonly faults: InjectedFault[] = [];
  readonly headerDialect: 'openai' | 'anthropic';
  /** Where rate-limit 429s state their wait (`POST /admin/wait-signal` changes it). */
  waitSignal: WaitSignal;
  /** Per-step Retry-After bookkeeping: counts retries that came too early. */
  readonly retries = new RetryTracker();
  /** First-call arrival per run id (priority measured where the work happens). */
  readonly firstCalls = new FirstCallLog();
  /** The `traceparent` each call arrived with, by call key (a run's trace reached the provider). */
  readonly traces = new TraceLog();
  /** Served calls' windows by call key: a step served twice, or a run's calls overlapping. */
  readonly calls = new CallLog();
  /** Served calls by the caller's call id, with their usage (`GET /v1/chat/completions?metadata[...]`). */
  readonly usage = new UsageLog();
  /**
   * Accept-and-drop (a load balancer or gateway restarting): the next `calls` are accepted and their
   * connection closed without an answer, `before` being served (nothing billed) or `after` (billed,
   * the answer lost).
   */
  drops: { calls: number; when: 'before' | 'after' } | null = null;
  /** The longest a call over the limit is held before its 429 (`POST /admin/hold` changes it); 0: none. */
  holdMs: number;
  /** Whether answers carry rate-limit headers (`POST /admin/headers` changes it). */
  rateLimitHeaders: boolean;
  readonly window: QuotaWindow;
  /** The simulator's clock, ms. */
  readonly now: () => number;
  private readonly tokens: QuotaMeter;
  private readonly requests: QuotaMeter;
  private readonly random: () => number;
  private readonly latency: LatencyModel;
  private readonly inputTokens: QuotaMeter;
  private readonly outputTokens: QuotaMeter;
  private readonly counters = { calls: 0, throttled: 0, refused: 0, tokens: 0, dropped: 0, held: 0 };
  private readonly bill = new Map<string, number>();
  private readonly billedAgain = new Map<string, number>();
  private readonly cutCalls = new Map<string, CutCalls>();
  private readonly unanswered = new Map<string, Map<symbol, number>>();
  private bystander: BystanderStats | null = null;
  private separateInput: boolean;
  private separateOutput: boolean;
  private seq = 0;

  constructor(opts: SimulatorOptions) {
    this.now = opts.now ?? Date.now;
    this.window = opts.window ?? 'rolling';
    this.holdMs = opts.holdMs ?? 0;
    this.rateLimitHeaders = opts.rateLimitHeaders ?? true;
    const meter = (perMinute: number): QuotaMeter =>
      this.window === 'calendar'
        ? new CalendarWindow(perMinute, this.now())
        : new TokenBucket(perMinute, this.now());
    this.tokens = meter(opts.tpm);
    this.requests = meter(opts.rpm);
    this.headerDialect = opts.headerDialect ?? 'openai';
    this.waitSignal = opts.waitSignal ?? 'standard';
    this.inputTokens = meter(opts.inputTpm ?? opts.tpm);
    this.outputTokens = meter(opts.outputTpm ?? opts.tpm);
    this.separateInput = opts.inputTpm !== undefined;
    this.separateOutput = opts.outputTpm !== undefined;
    this.random = seededRandom(opts.seed);
    this.latency = { ...DEFAULT_LATENCY, ...opts.latency };
  }

  /**
   * Decides a call and, when it passes, takes its tokens and one request. `cost` is the total, or
   * its input/output split (Anthropic mode meters both, and the total).
   */
  decide(cost: number | CallCost, tenant = '', dialect = this.headerDialect): Decision {
    const now = this.now();
    const split = typeof cost === 'number' ? { input: 0, output: cost } : cost;
    const total = split.input + split.output;
    // The key is checked before anything is metered, as a provider authenticates first.
    if (this.rejectedKey !== null) return { kind: 'key_refused', status: this.rejectedKey };
    const fault = this.faults[0];
    if (fault) {
      if (--fault.times <= 0) this.faults.shift();
      return { kind: 'injected', headers: this.faultHeaders(fault, now, dialect) };
    }
    if (this.spendCap || this.spendCapTenants.has(tenant))
      return { kind: 'spend_cap', headers: this.limitHeaders(now, dialect) };
    const waits: [string, number][] = [
      ['tokens', this.tokens.waitMs(total, now)],
      ['requests', this.requests.waitMs(1, now)],
    ];
    if (dialect === 'anthropic') {
      waits.push(['input tokens', this.inputTokens.waitMs(split.input, now)]);
      waits.push(['output tokens', this.outputTokens.waitMs(split.output, now)]);
    }
    const [exhausted, waitMs] = waits.reduce((a, b) => (b[1] > a[1] ? b : a));
    if (waitMs > 0) return { kind: 'throttled', waitMs, exhausted, headers: this.limitHeaders(now, dialect) };
    this.tokens.take(total, now);
    this.requests.take(1, now);
    if (dialect === 'anthropic') {
      this.inputTokens.take(split.input, now);
      this.outputTokens.take(split.output, now);
    }
    this.seq += 1;
    const id = `chatcmpl-sim${this.seq}-${Math.floor(this.random() * 0xffffffff)
      .toString(16)
      .padStart(8, '0')}`;
    const delayMs = latencyMs(this.latency, total, this.random);
    return { kind: 'ok', id, delayMs, headers: this.limitHeaders(now, dialect) };
  }

  /**
   * Counts a call once it is answered; `servedTokens` is 0 unless it succeeded; `again`: its step
   * (call key) had been served before.
   */
  answered(status: number, servedTokens: number, tenant = '', again = false): void {
    this.counters.calls += 1;
    if (status === 429) this.counters.throttled += 1;
    if (status === 401 || status === 403 || status === 500) this.counters.refused += 1;
    this.counters.tokens += servedTokens;
    if (servedTokens <= 0) return;
    this.bill.set(tenant, (this.bill.get(tenant) ?? 0) + servedTokens);
    if (again) this.billedAgain.set(tenant, (this.billedAgain.get(tenant) ?? 0) + servedTokens);
  }

  /** Counts a call held over the limit instead of refused (once per call). */
  heldCall(): void {
    this.counters.held += 1;
  }

  /** Whether the call arriving now is dropped at `when` (and counts it as one of the drops). */
  drop(when: 'before' | 'after'): boolean {
    const d = this.drops;
    if (!d || d.when !== when) return false;
    if (--d.calls <= 0) this.drops = null;
    this.counters.dropped += 1;
    return true;
  }

  /**
   * A call billed to `tenant` is waiting for its answer, due at `dueAt` (this state's clock); call
   * the result once it left (or was cut).
   */
  answering(tenant: string, dueAt: number): () => void {
    const due = this.unanswered.get(tenant) ?? new Map<symbol, number>();
    this.unanswered.set(tenant, due);
    const id = Symbol('call');
    due.set(id, dueAt);
    return () => {
      due.delete(id);
      if (due.size === 0 && this.unanswered.get(tenant) === due) this.unanswered.delete(tenant);
    };
  }

  /**
   * Calls billed to `tenant` whose answer is due no sooner than `marginMs` from now: a fault
   * injected now lands before their answer leaves.
   */
  unansweredOf(tenant: string, marginMs = 0): number {
    const now = this.now();
    let n = 0;
    for (const at of this.unanswered.get(tenant)?.values() ?? []) if (at >= now + marginMs) n++;
    return n;
  }

  /** A billed call's caller went away before its answer left: the bill stands, nobody read it. */
  cut(tenant: string, callKey: string | undefined, billedTokens: number): void {
    const c = this.cutCalls.get(tenant) ?? { calls: 0, tokens: 0, keys: [] };
    c.calls += 1;
    c.tokens += billedTokens;
    if (callKey !== undefined && c.keys.length < 500) c.keys.push([callKey, billedTokens]);
    this.cutCalls.set(tenant, c);
  }

  /** Tokens billed to `tenant` so far. */
  billOf(tenant: string): number {
    return this.bill.get(tenant) ?? 0;
  }

  /**
   * Another consumer of the same account: one call of `callTokens` every so often, `tpm` tokens a
   * minute in all, through the same quota (not counted in `calls`/`bill`). Returns a stop function.
   */
  startBystander(tpm: number, callTokens = 500): () => void {
    const stats: BystanderStats = { tpm, calls: 0, throttled: 0, tokens: 0 };
    this.bystander = stats;
    const everyMs = Math.max(5, (callTokens * 60_000) / Math.max(1, tpm));
    const timer = setInterval(() => {
      const d = this.decide({ input: 10, output: Math.max(1, callTokens - 10) }, '\u0000bystander');
      stats.calls += 1;
      if (d.kind === 'ok') stats.tokens += callTokens;
      else stats.throttled += 1;
    }, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Changes the quota live; omitted fields stay. */
  setQuota(quota: {
    tpm?: number | undefined;
    rpm?: number | undefined;
    inputTpm?: number | undefined;
    outputTpm?: number | undefined;
  }): void {
    const now = this.now();
    if (quota.tpm !== undefined) this.tokens.setLimit(quota.tpm, now);
    if (quota.rpm !== undefined) this.requests.setLimit(quota.rpm, now);
    // Input and output quotas follow the total unless they were set apart.
    if (quota.inputTpm !== undefined) this.separateInput = true;
    if (quota.outputTpm !== undefined) this.separateOutput = true;
    const input = quota.inputTpm ?? (this.separateInput ? undefined : quota.tpm);
    const output = quota.outputTpm ?? (this.separateOutput ? undefined : quota.tpm);
    if (input !== undefined) this.inputTokens.setLimit(input, now);
    if (output !== undefined) this.outputTokens.setLimit(output, now);
  }

  /** Counters since start and the quota now. */
  stats(): SimulatorStats {
    return {
      ...this.counters,
      earlyRetries: this.retries.earlyRetries,
      quota: { tpm: this.tokens.limit, rpm: this.requests.limit },
      bill: Object.fromEntries(this.bill),
      billedAgain: Object.fromEntries(this.billedAgain),
      cut: Object.fromEntries([...this.cutCalls].map(([t, c]) => [t, { ...c, keys: [...c.keys] }])),
      headerDialect: this.headerDialect,
      waitSignal: this.waitSignal,
      window: this.window,
      holdMs: this.holdMs,
      rateLimitHeaders: this.rateLimitHeaders,
      bystander: this.bystander ? { ...this.bystander } : null,
    };
  }

  /** The rate-limit headers of a call answered at `now`, in `dialect` (default: this simulator's). */
  limitHeaders(now: number, dialect = this.headerDialect): Record<string, string> {
    if (!this.rateLimitHeaders) return {};
    if (dialect === 'openai') return rateLimitHeaders(this.limits(now));
    const b = (t: QuotaMeter) => ({ limit: t.limit, remaining: t.remaining(now), resetMs: t.resetMs(now) });
    return anthropicRateLimitHeaders(
      {
        requests: b(this.requests),
        tokens: b(this.tokens),
        inputTokens: b(this.inputTokens),
        outputTokens: b(this.outputTokens),
      },
      now,
    );
  }

  private faultHeaders(
    f: InjectedFault,
    now: number,
    dialect: 'openai' | 'anthropic',
  ): Record<string, string> {
    const h = this.limitHeaders(now, dialect);
    if (f.retryAfter !== undefined) h['retry-after'] = f.retryAfter;
    if (f.resetTokens !== undefined) {
      if (dialect === 'openai') h['x-ratelimit-reset-tokens'] = f.resetTokens;
      else h['anthropic-ratelimit-tokens-reset'] = f.resetTokens;
    }
    return h;
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
