import { describe, expect, it } from 'vitest';
import { SimulatorState } from '../../../src/standins/modelplane/state';

describe('simulator bill: calls served again for a call key already served', () => {
  it('bills every served call and counts, per tenant, the tokens of a key served a second time', () => {
    const sim = new SimulatorState({ tpm: 1e9, rpm: 1e9, seed: 1, now: () => 0 });
    const serve = (tokens: number, tenant: string, key?: string) => {
      sim.answered(200, tokens, tenant, sim.calls.timesServed(key) > 0);
      sim.calls.begin(key)();
    };
    serve(100, 'a', 'run-1:0');
    serve(100, 'a', 'run-1:1');
    sim.answered(429, 0, 'a', sim.calls.timesServed('run-1:2') > 0); // throttled: neither billed nor served
    serve(100, 'a', 'run-1:2');
    serve(100, 'a', 'run-1:1'); // the same step called again after it was billed
    serve(40, 'b', 'run-2:0');
    serve(40, 'b'); // no key: billed, never counted as again
    serve(40, 'b');
    const stats = sim.stats();
    expect(stats.bill).toEqual({ a: 400, b: 120 });
    expect(stats.billedAgain).toEqual({ a: 100 });
  });
});
