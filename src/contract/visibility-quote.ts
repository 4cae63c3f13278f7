/**
 * A string literal for a Temporal visibility query: single-quoted, with `\` and `'` escaped by a
 * backslash (the query language reads `\\` as one backslash and `\'` as a quote). Escaping only the
 * quote would let a trailing backslash swallow the closing quote.
 */
export function quoteVisibilityString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The inverse, for tests and for reading a literal back: strips the quotes and undoes the escapes. */
export function unquoteVisibilityString(literal: string): string {
  if (literal.length < 2 || !literal.startsWith("'") || !literal.endsWith("'")) {
    throw new Error(`not a quoted literal: ${literal}`);
  }
  const body = literal.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') {
      const next = body[i + 1];
      if (next !== '\\' && next !== "'") throw new Error(`bad escape at ${i} in ${literal}`);
      out += next;
      i++;
    } else if (c === "'") {
      throw new Error(`unescaped quote at ${i} in ${literal}`);
    } else {
      out += c;
    }
  }
  return out;
}
