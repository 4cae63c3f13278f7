/**
 * Strict readers of the header values a provider's rate limits are written in. Each returns
 * undefined for anything it does not recognise: a garbled header is ignored, never guessed at.
 */

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A non-negative whole number written as digits only ("12", not "1e3", "0x10", " 3", "-1"). */
export function parseCount(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined || !/^\d{1,15}$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

/** A non-negative decimal ("2500", "1.5"). */
export function parseDecimal(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined || !/^\d{1,15}(\.\d{1,9})?$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

function utc(year: number, month: string, day: number, h: number, m: number, s: number): number | undefined {
  const mi = MONTHS.indexOf(month);
  if (mi < 0 || h > 23 || m > 59 || s > 60) return undefined;
  const t = Date.UTC(year, mi, day, h, m, Math.min(s, 59));
  // Date.UTC rolls "31 Feb" over into March: refuse dates that do not exist.
  return new Date(t).getUTCDate() === day ? t : undefined;
}

/**
 * An HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, or the obsolete RFC 850 and asctime forms a
 * recipient must accept. Returns ms since epoch.
 */
export function parseHttpDate(text: string): number | undefined {
  const s = text.trim();
  let m = /^([A-Z][a-z]{2}), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/.exec(s);
  if (m) {
    if (!DAYS.includes(m[1]!)) return undefined;
    return utc(Number(m[4]), m[3]!, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  }
  m = /^([A-Z][a-z]+), (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/.exec(s);
  if (m) {
    if (!LONG_DAYS.includes(m[1]!)) return undefined;
    // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
    const yy = Number(m[4]);
    const year = yy + 2000 > new Date().getUTCFullYear() + 50 ? 1900 + yy : 2000 + yy;
    return utc(year, m[3]!, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  }
  m = /^([A-Z][a-z]{2}) ([A-Z][a-z]{2}) ( \d|\d{2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/.exec(s);
  if (m) {
    if (!DAYS.includes(m[1]!)) return undefined;
    return utc(Number(m[7]), m[2]!, Number(m[3]!.trim()), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  return undefined;
}

/**
 * `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date, as ms from `now` (a date in the
 * past is 0). Anything else (negative, fractional, "soon", a date in another format) is undefined.
 */
export function parseRetryAfter(text: string | null | undefined, now: number): number | undefined {
  if (text === null || text === undefined) return undefined;
  const seconds = parseCount(text);
  if (seconds !== undefined) return seconds * 1000;
  const at = parseHttpDate(text);
  return at === undefined ? undefined : Math.max(0, at - now);
}

/** An RFC 3339 timestamp ("2026-11-30T12:00:05Z", offsets and fractions allowed), as ms since epoch. */
export function parseRfc3339(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/.exec(
    text.trim(),
  );
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 60) return undefined;
  if (new Date(Date.UTC(y, mo - 1, d)).getUTCDate() !== d) return undefined;
  const t = Date.parse(text.trim().replace(' ', 'T'));
  return Number.isNaN(t) ? undefined : t;
}

const UNIT_MS: Record<string, number> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 1e-6,
};

/** Parses "6m0s", "1.2s", "20ms" (or bare seconds, "2") into ms; undefined when unreadable. */
export function parseDuration(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined) return undefined;
  const s = text.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const parts = [...s.matchAll(/(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== s) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * (UNIT_MS[p[2] ?? ''] ?? 0), 0);
}
