import { describe, expect, it } from 'vitest';
import { lastValueWithin, waitFor } from '../support/stack';

describe("the test stack's waits", () => {
  it('waitFor returns the value that met the condition', async () => {
    let n = 0;
    await expect(
      waitFor(
        async () => ++n,
        (v) => v === 3,
        5_000,
        1,
      ),
    ).resolves.toBe(3);
  });

  it('waitFor throws on timeout with the last value it saw', async () => {
    await expect(
      waitFor(
        async () => ({ status: 503, body: { ready: false } }),
        (v) => v.status === 200,
        30,
        5,
      ),
    ).rejects.toThrow(/not met within 30 ms .*last saw \{"status":503,"body":\{"ready":false\}\}/);
  });

  it('lastValueWithin returns the last value on timeout, for a caller that asserts on it', async () => {
    await expect(
      lastValueWithin(
        async () => 'still waiting',
        (v) => v === 'up',
        30,
        5,
      ),
    ).resolves.toBe('still waiting');
  });
});
