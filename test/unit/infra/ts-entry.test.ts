import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tsEntry } from '../../../src/infra/ts-entry';

const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('an entry point started as Fairway starts them', () => {
  it('gets SIGTERM itself and shuts down gracefully even while its event loop is busy', async () => {
    const { command, args } = tsEntry(path.join('test', 'fixtures', 'processes', 'busy-on-sigterm.ts'));
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    // SIGTERM goes the moment a busy stretch is announced after `ready`: 300 ms of busy loop follow.
    let signalled = false;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!signalled && /ready[\s\S]*busy/.test(out)) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (code, signal) => resolve([code, signal])),
    );
    // The tsx command instead relayed the signal and SIGKILLed the busy child after 30 ms: exit 143.
    expect(await exited, out).toEqual([0, null]);
    expect(signalled, out).toBe(true);
    expect(out).toContain('SIGTERM: graceful shutdown');
  });
});
