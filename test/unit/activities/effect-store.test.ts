import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEffectStore } from '../../../src/activities/effect-store';
import type { EffectStore } from '../../../src/activities/effect-store';

let dir: string;
const open: EffectStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fairway-effects-'));
});
afterEach(() => {
  open.splice(0).forEach((s) => s.close());
  rmSync(dir, { recursive: true, force: true });
});

function store(file = join(dir, 'nested', 'effects.db')): EffectStore {
  const s = openEffectStore(file);
  open.push(s);
  return s;
}

describe('effect store', () => {
  it('applies a key once however often it is attempted, and counts every attempt', () => {
    const s = store();
    expect(s.apply('run-a-1/effect', { n: 1 })).toEqual({ applied: true });
    expect(s.apply('run-a-1/effect', { n: 1 })).toEqual({ applied: false });
    expect(s.apply('run-a-1/effect', { n: 2 })).toEqual({ applied: false });
    expect(s.apply('run-b-1/effect', {})).toEqual({ applied: true });
    expect(s.summary()).toEqual({ effects: 2, attempts: 4, duplicates: 0 });
  });

  it('keeps effects across reopening', () => {
    const file = join(dir, 'effects.db');
    const first = openEffectStore(file);
    first.apply('k', {});
    first.close();
    const again = store(file);
    expect(again.apply('k', {})).toEqual({ applied: false });
    expect(again.summary()).toEqual({ effects: 1, attempts: 2, duplicates: 0 });
  });

  it('shares one file between two store instances without applying a key twice', () => {
    const file = join(dir, 'shared.db');
    const a = store(file);
    const b = store(file);
    expect(a.apply('k1', {})).toEqual({ applied: true });
    expect(b.apply('k1', {})).toEqual({ applied: false });
    expect(b.apply('k2', {})).toEqual({ applied: true });
    expect(a.apply('k2', {})).toEqual({ applied: false });
    expect(a.summary()).toEqual({ effects: 2, attempts: 4, duplicates: 0 });
    expect(b.summary()).toEqual(a.summary());
  });

  it('stays exactly-once when two processes race on the same keys', async () => {
    const file = join(dir, 'race.db');
    const child = join(__dirname, 'effect-store-child.ts');
    const startAt = String(Date.now() + 1500);
    const run = () => promisify(execFile)(process.execPath, ['--import', 'tsx', child, file, '300', startAt]);
    const [x, y] = await Promise.all([run(), run()]);
    expect(Number(x.stdout) + Number(y.stdout)).toBe(300);
    expect(store(file).summary()).toEqual({ effects: 300, attempts: 600, duplicates: 0 });
  });

  it('reports duplicates honestly when the log shows a key applied twice', () => {
    const file = join(dir, 'tampered.db');
    const s = store(file);
    s.apply('k', {});
    const raw = new Database(file);
    raw.prepare("INSERT INTO attempts (key, applied, at) VALUES ('k', 1, 0)").run();
    raw.close();
    expect(s.summary()).toEqual({ effects: 1, attempts: 2, duplicates: 1 });
  });
});
