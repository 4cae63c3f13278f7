/**
 * Schemathesis closes each pass with pytest's banner (`===== 3 warnings in 76.87s =====`,
 * `===== No issues found in 47.00s =====`). CI reads pytest's closing lines wherever they appear in
 * `.ci/run`'s output, and such a banner names no test executed, so a green run was judged to have run
 * no test. `npm run fuzz` prints every line of schemathesis's output, but a banner without its `=` rule,
 * after `schemathesis:`, so the suite's own closing line is the only one a reader of the log finds.
 */
const BANNER = /^\s*=+\s+(.*?)\s+=+\s*$/;

export function unbannered(line: string): string {
  const m = BANNER.exec(line);
  return m ? `schemathesis: ${m[1]}` : line;
}
