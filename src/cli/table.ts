export interface Column<T> {
  title: string;
  value: (row: T) => string;
  /** Numbers align right. */
  right?: boolean;
}

/** A plain-text table: a header, a rule, aligned columns separated by two spaces. */
export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((r) => columns.map((c) => c.value(r)));
  const widths = columns.map((c, i) => Math.max(c.title.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (columns[i]!.right ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.title)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join(
    '\n',
  );
}

/** `key  value` lines, keys aligned. */
export function pairs(entries: [string, string][]): string {
  const w = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

export const num = (n: number | null | undefined): string =>
  n === null || n === undefined ? '-' : Math.round(n).toLocaleString('en-US');

export const pct = (x: number | null | undefined): string =>
  x === null || x === undefined ? '-' : `${(x * 100).toFixed(1)}%`;

export const rate = (x: number | null | undefined): string =>
  x === null || x === undefined ? '-' : x.toFixed(1);
