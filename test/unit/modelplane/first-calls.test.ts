import { describe, expect, it } from 'vitest';
import { FirstCallLog } from '../../../src/standins/modelplane/first-calls';

describe('first-call log', () => {
  it("keeps each run's first call only, and the runs in the order their first calls arrived", () => {
    const log = new FirstCallLog();
    log.arrived('run-b:1', 10);
    log.arrived('run-a:1', 10);
    log.arrived('run-b:2', 11);
    log.arrived(undefined, 12);
    log.arrived('run-c:1', 13);
    expect(log.arrivals()).toEqual(['run-b', 'run-a', 'run-c']);
    expect(log.pick(['run-a', 'run-b', 'run-x'])).toEqual({ 'run-a': 10, 'run-b': 10 });
  });

  it('forgets the oldest runs past its bound', () => {
    const log = new FirstCallLog(2);
    for (const id of ['r1', 'r2', 'r3']) log.arrived(`${id}:1`, 1);
    expect(log.arrivals()).toEqual(['r2', 'r3']);
    expect(log.get('r1')).toBeUndefined();
  });
});
