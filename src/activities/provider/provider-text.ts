/** The most of a provider's error text that reaches a run's failure (history and the tenant). */
export const MAX_PROVIDER_MESSAGE_CHARS = 300;
/** The most of it that reaches the operator's log. */
export const MAX_LOGGED_PROVIDER_CHARS = 4000;

const REDACTED = '[redacted]';

/**
 * Key-like text: provider key shapes (`sk-…`, `sk-ant-…`), bearer tokens, `key=value` pairs whose
 * name says secret, and long unbroken runs of letters and digits (tokens, signatures).
 */
const PATTERNS: readonly [RegExp, string][] = [
  [/\b(?:sk|pk|rk|ak)-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi, `$1 ${REDACTED}`],
  [
    /\b((?:x-)?api[_-]?key|authorization|access[_-]?token|token|secret|password)(["']?\s*[:=]\s*["']?)[^\s"',;}]{4,}/gi,
    `$1$2${REDACTED}`,
  ],
  [/\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{40,}/g, REDACTED],
];

/** `text` with every occurrence of `secrets` (the call's own credentials) and anything key-like replaced. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join(REDACTED);
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** At most `max` characters of `text`, saying how much was cut. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${text.length - max} more characters cut)`;
}

/** Provider text fit for a run's failure: redacted, then cut to MAX_PROVIDER_MESSAGE_CHARS. */
export function providerMessage(text: string, secrets: readonly string[] = []): string {
  return cutText(redactSecrets(text, secrets), MAX_PROVIDER_MESSAGE_CHARS);
}

/** The secrets a call sends: its `authorization` token and `x-api-key`, to keep out of any echo. */
export function credentialsOf(headers: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase();
    if (n === 'x-api-key') out.push(value);
    if (n === 'authorization') out.push(value.replace(/^\S+\s+/, ''));
  }
  return out;
}
