/**
 * How Fairway starts one of its TypeScript entry points as a process: Node itself, with tsx as its
 * module loader (`node --import tsx src/entry/worker.ts`), so the process that runs the code is the
 * one that receives the signals. Not the `tsx` command: it runs the program as a child of its own and
 * relays SIGTERM, and when the child has not acknowledged the signal within 30 ms (its event loop
 * busy, as on a loaded machine) it SIGKILLs the child, so a worker stopped for a deploy would die
 * without draining.
 */
export function tsEntry(file: string): { command: string; args: string[] } {
  return { command: process.execPath, args: ['--import', 'tsx', file] };
}
