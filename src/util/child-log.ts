import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';

/**
 * Appends a child's stdout and stderr to one file, which is closed once the child's output has
 * closed. Piping both streams with pipe()'s default `end: true` closed the file when the first of them
 * ended, and the other's last output then threw "write after end" (an uncaught exception that failed
 * a green run of the cluster smoke test as it stopped its processes).
 */
export function logChildOutput(child: ChildProcess, file: string): WriteStream {
  const out = createWriteStream(file, { flags: 'a' });
  child.stdout?.pipe(out, { end: false });
  child.stderr?.pipe(out, { end: false });
  child.once('close', () => out.end());
  return out;
}
