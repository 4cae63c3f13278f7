import type { UnknownFormat } from './wait-hints';

/** Shapes already reported, process-wide: a header in an unknown format is logged once, not per call. */
const seen = new Set<string>();
/** Beyond this many shapes, new ones are no longer logged (a provider changing formats per call). */
const MAX_SHAPES = 256;

/** Logs `f` unless a value of the same header and shape (its digits ignored) was logged before. */
export function reportUnknownFormat(
  log: { warn(obj: object, msg: string): void } | undefined,
  f: UnknownFormat,
): void {
  const shape = `${f.header}\u0000${f.value.replace(/\d+/g, '#').slice(0, 64)}`;
  if (!log || seen.has(shape) || seen.size >= MAX_SHAPES) return;
  seen.add(shape);
  log.warn(
    { header: f.header, value: f.value.slice(0, 200) },
    'provider wait header in an unknown format: ignored (logged once per header and format)',
  );
}
