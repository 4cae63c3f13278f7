import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { clientTimeoutMs } from '../../src/activities/model-client';

const timeoutOf = (v: string | undefined) =>
  loadConfig(v === undefined ? {} : { MODEL_CALL_TIMEOUT_SECONDS: v }).runs.modelCallTimeoutSeconds;

describe('MODEL_CALL_TIMEOUT_SECONDS: the model call timeout', () => {
  it('defaults to 600 s, above the 60 s hold gateways document and the short step timeout it replaces', () => {
    expect(timeoutOf(undefined)).toBe(600);
    expect(timeoutOf(undefined), 'above the 60 s hold gateways document').toBeGreaterThan(60);
  });

  it('accepts whole seconds from 2 to 900 and refuses the rest with the variable named', () => {
    expect(timeoutOf('2')).toBe(2);
    expect(timeoutOf('900')).toBe(900);
    for (const bad of ['1', '0', '901', '-5', '7.5', 'soon'])
      expect(() => timeoutOf(bad), bad).toThrow(/MODEL_CALL_TIMEOUT_SECONDS/);
  });

  it('the client gives up a tenth sooner, at most 5 s sooner, and always before the activity times out', () => {
    expect(clientTimeoutMs(3_000)).toBe(2_700);
    expect(clientTimeoutMs(8_000)).toBe(7_200);
    expect(clientTimeoutMs(60_000)).toBe(55_000);
    expect(clientTimeoutMs(600_000)).toBe(595_000);
    for (const s of [2, 3, 8, 30, 60, 120, 600, 900]) {
      const ms = clientTimeoutMs(s * 1000)!;
      expect(ms).toBeLessThan(s * 1000);
      expect(ms).toBeGreaterThanOrEqual(s * 900);
    }
    expect(clientTimeoutMs(undefined)).toBeUndefined();
    expect(clientTimeoutMs(0)).toBeUndefined();
  });
});
