import { parseDecimal, parseDuration, parseHttpDate, parseRetryAfter, parseRfc3339 } from './header-values';

/**
 * The wait a provider's 429 states, read from every place providers and gateways put it. Pure: the
 * caller caps the result at its maximum pause and reports unreadable values (`onUnknown`).
 */

/** A wait longer than this is taken for a misreading (a garbled or misunderstood value) and ignored. */
export const ABSURD_WAIT_MS = 7 * 24 * 3_600_000;

/** A bare reset number at least this large is an instant (Unix epoch seconds), not a delay. */
const EPOCH_SECONDS_FROM = 1_000_000_000;
/** …and at least this large, epoch milliseconds. */
const EPOCH_MS_FROM = 1_000_000_000_000;

/** The wait one 429 states, and where it was read (a header name, or `body`). */
export interface WaitHint {
  waitMs: number;
  from: string;
}

/** A recognised header whose value could not be read. */
export interface UnknownFormat {
  header: string;
  value: string;
}

type Report = (f: UnknownFormat) => void;

/**
 * The wait a 429 asks for, in this order: `retry-after-ms`, `x-ms-retry-after-ms`, `retry-after`
 * (delta-seconds or an HTTP-date), a vendor-prefixed `*-retry-after-ms` or `*-retry-after`
 * (LiteLLM's `llm_provider-retry-after`), a wait stated in the error text ("try again in 1.2s"),
 * and, when none states one, the soonest future reset of the rate-limit headers (Go durations, bare
 * seconds, RFC 3339, HTTP-dates, Unix epoch seconds). `now` resolves dates and instants. Undefined
 * when the answer states no usable wait.
 */
export function readWaitHint(
  headers: Headers,
  body: string,
  now: number,
  onUnknown: Report = () => {},
): WaitHint | undefined {
  return headerWait(headers, now, onUnknown) ?? bodyWait(body) ?? soonestReset(headers, now, onUnknown);
}

const STANDARD_MS = ['retry-after-ms', 'x-ms-retry-after-ms'];

/**
 * The wait an answer's headers state (`retry-after-ms`, `x-ms-retry-after-ms`, `retry-after`, then
 * vendor-prefixed variants): the one reader of wait headers, for every answer.
 */
export function headerWait(
  headers: Headers,
  now: number,
  onUnknown: Report = () => {},
): WaitHint | undefined {
  const read = (name: string, parse: (v: string) => number | undefined): WaitHint | undefined => {
    const value = headers.get(name);
    if (value === null) return undefined;
    const waitMs = sane(parse(value));
    if (waitMs === undefined) onUnknown({ header: name, value });
    return waitMs === undefined ? undefined : { waitMs, from: name };
  };
  const ms = (v: string) => parseDecimal(v);
  const seconds = (v: string) => secondsOrDate(v, now);
  for (const name of STANDARD_MS) {
    const hit = read(name, ms);
    if (hit) return hit;
  }
  const standard = read('retry-after', seconds);
  if (standard) return standard;
  const names = [...headers.keys()];
  for (const name of names.filter((n) => n.endsWith('-retry-after-ms') && !STANDARD_MS.includes(n))) {
    const hit = read(name, ms);
    if (hit) return hit;
  }
  for (const name of names.filter((n) => n.endsWith('-retry-after'))) {
    const hit = read(name, seconds);
    if (hit) return hit;
  }
  return undefined;
}

/** Delta-seconds (whole, or decimal as some gateways send) or an HTTP-date, as ms from `now`. */
function secondsOrDate(text: string, now: number): number | undefined {
  const whole = parseRetryAfter(text, now);
  if (whole !== undefined) return whole;
  const decimal = parseDecimal(text);
  return decimal === undefined ? undefined : decimal * 1000;
}

const BODY_WAIT = /\b(?:try again|retry)\s+(?:in|after)\s+(\d[\d.]*\s*[a-zµ]*(?:[\d.]+[a-zµ]+)*)/i;
const WORD_UNIT_MS: [RegExp, number][] = [
  [/^(?:ms|msecs?|milliseconds?)$/, 1],
  [/^(?:s|secs?|seconds?)$/, 1000],
  [/^(?:m|mins?|minutes?)$/, 60_000],
  [/^(?:h|hrs?|hours?)$/, 3_600_000],
];

/** A wait stated in an error text: "Please try again in 1.2s", "retry after 6 seconds", "retry in 6m0s". */
export function bodyWait(body: string): WaitHint | undefined {
  const m = BODY_WAIT.exec(body);
  if (!m) return undefined;
  const said = m[1]!.trim().replace(/\.$/, '');
  const go = parseDuration(said);
  if (go !== undefined) return wrap(sane(go), 'body');
  const worded = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i.exec(said);
  if (!worded) return undefined;
  const unit = worded[2]!.toLowerCase();
  const perUnit = WORD_UNIT_MS.find(([re]) => re.test(unit))?.[1];
  return perUnit === undefined ? undefined : wrap(sane(Number(worded[1]) * perUnit), 'body');
}

/** A rate-limit reset header: `x-ratelimit-reset*`, `ratelimit-reset`, `anthropic-ratelimit-*-reset`… */
const isResetHeader = (name: string) => name.includes('ratelimit') && /(^|-)reset(-|$)/.test(name);

function soonestReset(headers: Headers, now: number, onUnknown: Report): WaitHint | undefined {
  let best: WaitHint | undefined;
  for (const [name, value] of headers) {
    if (!isResetHeader(name)) continue;
    const ms = parseReset(value, now);
    if (ms === undefined || ms > ABSURD_WAIT_MS) {
      onUnknown({ header: name, value });
      continue;
    }
    // A bucket that is already full (reset now or past) is not what refused the call.
    if (ms > 0 && (best === undefined || ms < best.waitMs)) best = { waitMs: ms, from: name };
  }
  return best;
}

/**
 * A reset value as ms from `now`: a Go-style duration or bare seconds ("6m0s", "1.2s", "20ms", "13"),
 * a Unix epoch in seconds or ms (a bare number too large to be a delay), an RFC 3339 instant or an
 * HTTP-date. An instant in the past is 0.
 */
export function parseReset(text: string, now: number): number | undefined {
  const s = text.trim();
  if (/^\d{1,15}(\.\d+)?$/.test(s)) {
    const n = Number(s);
    if (n >= EPOCH_MS_FROM) return Math.max(0, n - now);
    if (n >= EPOCH_SECONDS_FROM) return Math.max(0, n * 1000 - now);
  }
  const delay = parseDuration(s);
  if (delay !== undefined) return delay;
  const at = parseRfc3339(s) ?? parseHttpDate(s);
  return at === undefined ? undefined : Math.max(0, at - now);
}

const sane = (ms: number | undefined) =>
  ms !== undefined && Number.isFinite(ms) && ms >= 0 && ms <= ABSURD_WAIT_MS ? ms : undefined;

const wrap = (waitMs: number | undefined, from: string) =>
  waitMs === undefined ? undefined : { waitMs, from };
