import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { logChildOutput } from '../../../src/util/child-log';

describe("a child's output in its log file", () => {
  it('keeps what one stream writes after the other has ended, and closes the file after both', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fairway-child-log-'));
    try {
      const file = path.join(dir, 'child.log');
      // stdout ends first; stderr writes 100 ms later (before: "write after end", uncaught).
      const child = spawn(
        process.execPath,
        ['-e', "process.stdout.end('out\\n'); setTimeout(() => process.stderr.write('err\\n'), 100);"],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const out = logChildOutput(child, file);
      await new Promise<void>((resolve) => out.once('finish', () => resolve()));
      expect(readFileSync(file, 'utf8').split('\n').filter(Boolean).sort()).toEqual(['err', 'out']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
