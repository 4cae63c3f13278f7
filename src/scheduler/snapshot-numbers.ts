/** How a snapshot version writes numbers inside its packed strings. */
export interface Numbers {
  to(x: number): string;
  from(s: string | undefined): number;
}

/** Version 2: an integer in base 36; anything else (never written by the core, but exact all the same) as "~" + decimal. */
export const BASE36: Numbers = {
  to: (x) => (Number.isSafeInteger(x) ? x.toString(36) : `~${String(x)}`),
  from: (s) => (s === undefined ? NaN : s.startsWith('~') ? Number(s.slice(1)) : parseInt(s, 36)),
};

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.';

/**
 * Version 3: a non-negative integer in base 64 (digits 0-9, a-z, A-Z, "_", "."; a token count up to
 * MAX_TOKENS in 5); anything else as "~" + decimal.
 */
export const BASE64: Numbers = {
  to(x) {
    if (!Number.isSafeInteger(x) || x < 0) return `~${String(x)}`;
    let out = '';
    do {
      out = (DIGITS[x % 64] as string) + out;
      x = Math.floor(x / 64);
    } while (x > 0);
    return out;
  },
  from(s) {
    if (s === undefined || s === '') return NaN;
    if (s.startsWith('~')) return Number(s.slice(1));
    let x = 0;
    for (const c of s) {
      const d = DIGITS.indexOf(c);
      if (d < 0) return NaN;
      x = x * 64 + d;
    }
    return x;
  },
};
