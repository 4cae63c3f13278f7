import { describe, expect, it } from 'vitest';
import { CallLog } from '../../../src/standins/modelplane/call-log';

describe('simulator call log (where two leases of one run would show)', () => {
  it('counts sequential steps of many runs as clean, and the most calls in flight at once', () => {
    const log = new CallLog();
    const a1 = log.begin('run-a:1');
    const b1 = log.begin('run-b:1');
    a1();
    b1();
    log.begin('run-a:2')();
    log.begin(undefined)();
    expect(log.summary()).toMatchObject({
      served: 3,
      runs: 2,
      stepsServedTwice: 0,
      runsOverlapping: 0,
      maxInFlight: 2,
    });
  });

  it('flags a step served twice and a run with two calls in flight at once', () => {
    const log = new CallLog();
    log.begin('run-a:1')();
    log.begin('run-a:1')(); // the same step again, after the first answer
    const x = log.begin('run-b:1');
    const y = log.begin('run-b:2'); // another call of run-b while its first is still in flight
    x();
    x(); // a second close of the same call changes nothing
    y();
    const s = log.summary();
    expect(s).toMatchObject({ served: 4, stepsServedTwice: 1, runsOverlapping: 1 });
    expect(s.sample).toEqual({ stepsServedTwice: ['run-a:1'], runsOverlapping: ['run-b'] });
    // Once both are answered, run-b's next call is not an overlap.
    log.begin('run-b:3')();
    expect(log.summary().runsOverlapping).toBe(1);
  });

  it('stops recording new keys past its bound', () => {
    const log = new CallLog(2);
    log.begin('r:1')();
    log.begin('r:2')();
    log.begin('r:3')();
    log.begin('r:1')(); // a key already known is still counted
    expect(log.summary()).toMatchObject({ served: 3, stepsServedTwice: 1 });
  });
});
