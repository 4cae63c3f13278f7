/** A fake terminal for `run()`: what the CLI printed, to stdout and stderr, line by line. */
export function terminal() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      out: (t: string) => out.push(t),
      err: (t: string) => err.push(t),
      isTty: false,
      sleep: async () => true,
    },
  };
}
