import { describe, expect, it } from 'vitest';
import { createProgress, formatDuration } from '../../../bench/lib/progress';

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 200, write: (s: string) => writes.push(s) } };
}

describe('bench progress', () => {
  it('on a terminal redraws one bar in place with done, rate and ETA', () => {
    let t = 0;
    const { writes, stream } = fakeStream(true);
    const p = createProgress('drill', 100, { stream, now: () => t });
    t = 10_000;
    p.update(25);
    const last = writes.at(-1)!;
    expect(last.startsWith('\r')).toBe(true);
    expect(last).toContain('[######------------------]');
    expect(last).toContain('25/100 units  25%');
    expect(last).toContain('2.5 units/s');
    expect(last).toContain('ETA 0:30'); // 75 left at 2.5/s
    expect(writes.join('')).not.toContain('\n');

    p.log('a fault struck');
    expect(writes.at(-2)).toBe('\r\x1b[Ka fault struck\n');
    expect(writes.at(-1)!.startsWith('\r')).toBe(true); // the bar comes back below the line
    t = 20_000;
    p.update(100);
    p.finish();
    expect(writes.at(-2)).toContain('100/100 units 100%');
    expect(writes.at(-2)).toContain('ETA 0:00');
    expect(writes.at(-1)).toBe('\n');
  });

  it('elsewhere prints a plain line every interval and at the end, never escape codes', () => {
    let t = 0;
    const { writes, stream } = fakeStream(false);
    const p = createProgress('storm', 60, { stream, now: () => t, everyMs: 10_000, unit: 's' });
    for (let s = 1; s <= 60; s++) {
      t = s * 1000;
      p.update(s);
    }
    p.finish();
    expect(writes.length).toBe(7); // at 10, 20, …, 60 s, and the final line
    for (const w of writes) {
      expect(w).toMatch(/^storm: \d+\/60 s +\d+% +[\d.]+ s\/s +elapsed \d+:\d\d +ETA \S+\n$/);
      expect(w).not.toContain('\x1b');
    }
    expect(writes[0]).toContain('10/60 s  17%  1.0 s/s');
    expect(writes[0]).toContain('ETA 0:50');
  });

  it('formats durations', () => {
    expect(formatDuration(5)).toBe('0:05');
    expect(formatDuration(3725)).toBe('1:02:05');
    expect(formatDuration(Infinity)).toBe('--:--');
  });
});
