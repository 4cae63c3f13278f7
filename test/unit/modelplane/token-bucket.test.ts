import { describe, expect, it } from 'vitest';
import { CalendarWindow, TokenBucket } from '../../../src/standins/modelplane/token-bucket';

describe('TokenBucket', () => {
  it('starts full and refills continuously at quota per minute', () => {
    const b = new TokenBucket(600, 0);
    expect(b.remaining(0)).toBe(600);
    expect(b.waitMs(600, 0)).toBe(0);
    b.take(600, 0);
    expect(b.remaining(0)).toBe(0);
    // 600 per minute is 10 per second.
    expect(b.remaining(1000)).toBe(10);
    expect(b.waitMs(20, 1000)).toBe(1000);
    expect(b.resetMs(1000)).toBe(59_000);
    expect(b.remaining(120_000)).toBe(600);
  });

  it('never fills beyond its capacity', () => {
    const b = new TokenBucket(100, 0);
    expect(b.remaining(10 * 60_000)).toBe(100);
    expect(b.resetMs(10 * 60_000)).toBe(0);
  });

  it('asks a cost larger than the quota to wait for a full bucket, a whole window when already full', () => {
    const b = new TokenBucket(100, 0);
    expect(b.waitMs(150, 0)).toBe(60_000);
    b.take(50, 0);
    expect(b.waitMs(150, 0)).toBe(30_000);
  });

  it('applies a quota cut at once and a raise at the new refill rate', () => {
    const b = new TokenBucket(1000, 0);
    b.setLimit(100, 0);
    expect(b.limit).toBe(100);
    expect(b.remaining(0)).toBe(100);
    b.take(100, 0);
    b.setLimit(6000, 0);
    expect(b.remaining(1000)).toBe(100);
  });
});

describe('CalendarWindow', () => {
  const minute = 60_000;
  const t0 = 1_700_000_000_000 - (1_700_000_000_000 % minute); // a minute boundary

  it('gives the whole allowance back at each minute of the clock, nothing in between', () => {
    const w = new CalendarWindow(600, t0 + 10_000);
    w.take(600, t0 + 10_000);
    expect(w.remaining(t0 + 59_999)).toBe(0);
    expect(w.waitMs(1, t0 + 47_000)).toBe(13_000);
    expect(w.resetMs(t0 + 47_000)).toBe(13_000);
    expect(w.remaining(t0 + minute)).toBe(600);
    expect(w.resetMs(t0 + minute)).toBe(0);
  });

  it('lets a whole allowance through at the end of one minute and again at the start of the next', () => {
    const w = new CalendarWindow(100, t0);
    w.take(100, t0 + 59_000);
    expect(w.waitMs(100, t0 + minute + 1)).toBe(0);
  });

  it('asks a cost above the quota to wait for the next minute', () => {
    const w = new CalendarWindow(100, t0);
    expect(w.waitMs(150, t0 + 20_000)).toBe(40_000);
  });

  it('applies a new quota within the current minute', () => {
    const w = new CalendarWindow(100, t0);
    w.take(80, t0);
    w.setLimit(50, t0 + 1);
    expect(w.remaining(t0 + 2)).toBe(0);
    w.setLimit(200, t0 + 3);
    expect(w.remaining(t0 + 4)).toBe(120);
  });
});
