import { ApiError } from '../../contract/errors';

/**
 * How deep a JSON body may nest objects and arrays, the body's own object or array counting as the
 * first level. Every free-form field (a run's `input`, an event's `data`, a trigger's `input`) lives
 * inside it, so none can nest deeper; and nothing a request sends can drive a recursion (canonical
 * hashing, `JSON.stringify`, template rendering) past this many frames.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * True when the JSON text in `raw` nests objects and arrays deeper than `max`. One pass over the
 * bytes, no recursion and no parse: brackets inside strings do not count (UTF-8 continuation bytes
 * never equal an ASCII bracket or quote). Malformed text is left for the parser to refuse.
 */
export function nestsDeeperThan(raw: Uint8Array, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Throws the 400 of a body nested deeper than MAX_JSON_DEPTH. */
export function assertJsonDepth(raw: Uint8Array): void {
  if (nestsDeeperThan(raw)) {
    throw new ApiError(
      'invalid_request',
      `The body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays.`,
      { maxDepth: MAX_JSON_DEPTH },
    );
  }
}
