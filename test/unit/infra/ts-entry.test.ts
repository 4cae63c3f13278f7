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
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (code, signal) => resolve([code, signal])),
    );
    for (let i = 0; i < 400 && !out.includes('ready'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(out).toContain('ready');
    await new Promise((r) => setTimeout(r, 100)); // inside one of its busy stretches, most likely
    child.kill('SIGTERM');
    // The tsx command instead relayed the signal and SIGKILLed the busy child after 30 ms: exit 143.
    expect(await exited, out).toEqual([0, null]);
    expect(out).toContain('SIGTERM: graceful shutdown');
  });
});
