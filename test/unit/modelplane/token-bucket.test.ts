import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../src/standins/modelplane/token-bucket';

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
