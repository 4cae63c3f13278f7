import { describe, expect, it } from 'vitest';
import { floodCounterFailures } from '../../../bench/scenarios/flood';

const done = { failed: 0, cancelled: 0, inFlight: 0, queued: 0 };

describe("the flood's counter check", () => {
  it('accepts leases that expired on a loaded machine and were admitted again', () => {
    // The suite's flood beside a throughput benchmark: 4 leases expired, 3 of those runs admitted again.
    expect(floodCounterFailures({ ...done, admitted: 1013, expired: 4, completed: 1010 }, 1010)).toEqual([]);
    expect(floodCounterFailures({ ...done, admitted: 1010, completed: 1010 }, 1010)).toEqual([]);
  });

  it('refuses a unit admitted twice without an expiry, one never admitted, or one not completed once', () => {
    expect(floodCounterFailures({ ...done, admitted: 1013, expired: 2, completed: 1010 }, 1010)).toEqual([
      'admitted 1013 - expired 2 > 1010 units',
    ]);
    expect(floodCounterFailures({ ...done, admitted: 1009, completed: 1010 }, 1010)).toEqual([
      'admitted 1009 < 1010 units',
    ]);
    expect(floodCounterFailures({ ...done, admitted: 1010, completed: 1011 }, 1010)).toEqual([
      'completed 1011 ≠ 1010 units',
    ]);
    expect(floodCounterFailures({ admitted: 1010, completed: 1010, adopted: 1, queued: 2 }, 1010)).toEqual([
      'adopted 1 leases outside a recovery',
      'queued 2',
    ]);
  });
});
