import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetScheduler, PRIORITIES } from '../../../src/scheduler';
import type { Admission, Priority, SubmitResult, UnitSubmission } from '../../../src/scheduler';
import { Driver, TENANTS, opArb, startFleet, tenantId } from './harness';
import { T0, makeFleet, units } from './helpers';

const now = (u: UnitSubmission[]) => u.map((x) => ({ ...x, admitNow: true }));
const admissionOf = (r: SubmitResult | undefined) => (r?.accepted ? r.admission : undefined);
const withdrawn = (r: SubmitResult | undefined) => r?.accepted === true && r.withdrawn === true;
const viaJson = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

describe('submit admitting at once (decide, then start)', () => {
  it('admits a unit in its answer when a slot is free: nothing is left queued, one lease is held', () => {
    const s = makeFleet({ tenants: { acme: {} } });
    const { results, others } = s.submitAdmittingNow(now(units('acme', 1)), T0);
    expect(others).toEqual([]);
    expect(admissionOf(results[0])).toMatchObject({ runId: 'acme-standard-0', attempt: 0, seq: 1 });
    expect(s.status(T0)).toMatchObject({ inFlight: 1, queued: { total: 0 } });
    // The admission was made: the loop has nothing left to admit for it.
    expect(s.admit(T0)).toEqual([]);
  });

  it('a unit the fair order does not admit now keeps its place: no later unit of a lower lane overtakes it', () => {
    const s = makeFleet({ settings: { concurrency: 1 }, tenants: { acme: {}, bulk: {} } });
    s.submitAdmittingNow(now(units('acme', 1)), T0);
    const [waiting] = units('acme', 1, 'interactive', 100, 1);
    const { results } = s.submitAdmittingNow(now([waiting!]), T0);
    expect(results[0]).toMatchObject({ accepted: true, duplicate: false });
    expect(admissionOf(results[0])).toBeUndefined();
    expect(withdrawn(results[0])).toBe(false);
    expect(s.isKnown(waiting!.runId)).toBe(true);
    // Batch work arrives while its run is being started; the slot that frees goes to it first.
    s.submit(units('bulk', 5, 'batch'), T0);
    s.release([{ runId: 'acme-standard-0', attempt: 0, usedTokens: 1, outcome: 'completed' }], T0);
    expect(s.admit(T0).map((a) => a.runId)).toEqual([waiting!.runId]);
    // Its run, started, submits it the usual way (a retry): a repeat, not a second unit.
    expect(s.submit([waiting!], T0)[0]).toMatchObject({ accepted: true, duplicate: true });
  });

  it('with keepQueued off, a unit not admitted now is withdrawn: not queued, not ended, submitted afresh later', () => {
    const s = makeFleet({ settings: { concurrency: 1 }, tenants: { acme: {} } });
    s.submitAdmittingNow(now(units('acme', 1)), T0);
    const before = s.status(T0).counters.submitted;
    const [second] = units('acme', 1, 'standard', 100, 1);
    const { results } = s.submitAdmittingNow(now([second!]), T0, { keepQueued: false });
    expect(results[0]).toMatchObject({ accepted: true, duplicate: false, withdrawn: true });
    expect(admissionOf(results[0])).toBeUndefined();
    expect(s.isKnown(second!.runId)).toBe(false);
    expect(s.status(T0)).toMatchObject({ inFlight: 1, queued: { total: 0 } });
    expect(s.status(T0).counters.submitted).toBe(before);
    // Its run is started, then submitted the usual way: a new unit, not a repeat.
    expect(s.submit([second!], T0)[0]).toMatchObject({ accepted: true, duplicate: false });
    expect(s.status(T0).queued.total).toBe(1);
  });

  it('a unit known before is answered as a repeat: neither admitted nor withdrawn here', () => {
    const s = makeFleet({ settings: { concurrency: 0 }, tenants: { acme: {} } });
    const [u] = units('acme', 1);
    s.submit([u!], T0);
    s.patchSettings({ concurrency: 5 });
    const { results, others } = s.submitAdmittingNow(now([u!]), T0);
    expect(results[0]).toMatchObject({ accepted: true, duplicate: true });
    expect(admissionOf(results[0])).toBeUndefined();
    expect(withdrawn(results[0])).toBe(false);
    // No fresh unit asked: no round ran (the loop admits it and tells its run).
    expect(others).toEqual([]);
    expect(s.admit(T0).map((a) => a.runId)).toEqual([u!.runId]);
  });

  it("the round's admissions of units queued before are handed back for their runs' notices", () => {
    const s = makeFleet({ settings: { concurrency: 0 }, tenants: { a: {}, b: {} } });
    s.submit(units('a', 2), T0);
    s.patchSettings({ concurrency: 4 });
    const { results, others } = s.submitAdmittingNow(now(units('b', 1)), T0);
    expect(others.map((a) => a.runId).sort()).toEqual(['a-standard-0', 'a-standard-1']);
    expect(admissionOf(results[0])?.runId).toBe('b-standard-0');
    expect(s.status(T0).inFlight).toBe(3);
  });

  it('while the chain closes nothing is admitted at once: every fresh unit is withdrawn', () => {
    const s = makeFleet({ tenants: { acme: {} } });
    const { results, others } = s.submitAdmittingNow(now(units('acme', 2)), T0, { round: false });
    expect(others).toEqual([]);
    expect(results.every(withdrawn)).toBe(true);
    expect(s.status(T0)).toMatchObject({ inFlight: 0, queued: { total: 0 } });
  });

  it('a refusal is a refusal: nothing is kept', () => {
    const s = makeFleet({ tenants: { acme: { maxQueued: 0 } } });
    const { results } = s.submitAdmittingNow(now(units('acme', 1)), T0);
    expect(results[0]).toMatchObject({ accepted: false, code: 'queue_full' });
    expect(s.status(T0).queued.total).toBe(0);
  });

  it('an admitted unit whose run never starts: its lease expires, the unit is never ended for good', () => {
    const s = makeFleet({ settings: { leaseTtlSeconds: 60 }, tenants: { acme: {} } });
    const [u] = units('acme', 1);
    expect(admissionOf(s.submitAdmittingNow(now([u!]), T0).results[0])).toBeDefined();
    const later = T0 + 61_000;
    expect(s.expireLeases(later).map((a) => a.runId)).toEqual([u!.runId]);
    // A retry of the same message is a repeat (that attempt ended); the run's next attempt is admitted.
    expect(s.submitAdmittingNow(now([u!]), later).results[0]).toMatchObject({ duplicate: true });
    const next = s.submitAdmittingNow(now([{ ...u!, attempt: 1 }]), later).results[0];
    expect(admissionOf(next)).toMatchObject({ runId: u!.runId, attempt: 1 });
  });

  it('property: the answer admits exactly what the loop would; a unit not admitted stays queued or leaves no trace', () => {
    const message = fc.array(
      fc.record({
        t: fc.integer({ min: 0, max: TENANTS }),
        lane: fc.integer({ min: 0, max: 2 }),
        cost: fc.integer({ min: 1, max: 600 }),
        admitNow: fc.boolean(),
        repeat: fc.boolean(),
      }),
      { minLength: 1, maxLength: 8 },
    );
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 80 }), message, fc.boolean(), (ops, msg, keepQueued) => {
        const d = new Driver(startFleet());
        for (const op of ops) d.apply(op);
        const known = [...d.queued.keys(), ...d.inFlight.keys()];
        const subs: UnitSubmission[] = msg.map((m, i) => ({
          runId: m.repeat && known.length > 0 ? known[i % known.length]! : `fresh-${i}`,
          tenant: tenantId(m.t),
          priority: PRIORITIES[m.lane] as Priority,
          cost: m.cost,
          admitNow: m.admitNow,
        }));
        const snap = viaJson(d.s.snapshot());
        const loop = FleetScheduler.restore(viaJson(snap));
        const answer = d.s.submitAdmittingNow(subs, d.now, { keepQueued });
        const plain = loop.submit(subs, d.now);
        const asked = subs.some((u, i) => u.admitNow === true && plain[i]?.accepted && !plain[i].duplicate);
        const round: Admission[] = asked ? loop.admit(d.now) : [];
        const inAnswers = answer.results.flatMap((r) => (admissionOf(r) ? [admissionOf(r)!] : []));
        // The same round: the same units, attempts, order numbers and reservations.
        const key = (a: Admission) => `${a.runId}/${a.attempt}/${a.seq}/${a.reserved}`;
        expect([...inAnswers, ...answer.others].map(key).sort()).toEqual(round.map(key).sort());
        answer.results.forEach((r, i) => {
          const u = subs[i]!;
          // Only an `admitNow` unit this message queued is answered with an admission or withdrawn.
          if (admissionOf(r) || withdrawn(r)) {
            expect(u.admitNow).toBe(true);
            expect(plain[i]).toMatchObject({ accepted: true, duplicate: false });
          }
          // A fresh `admitNow` unit is admitted in its answer, or else stays queued (keepQueued) or is
          // withdrawn; never admitted untold.
          const fresh = u.admitNow === true && plain[i]?.accepted === true && !plain[i].duplicate;
          if (fresh) {
            if (keepQueued) expect(withdrawn(r)).toBe(false);
            else expect(admissionOf(r) !== undefined).not.toBe(withdrawn(r));
            if (!admissionOf(r)) expect(d.s.isKnown(u.runId)).toBe(keepQueued);
            expect(answer.others.some((a) => a.runId === u.runId)).toBe(false);
          }
          if (withdrawn(r)) {
            expect(d.s.isKnown(u.runId)).toBe(false);
            expect(round.some((a) => a.runId === u.runId)).toBe(false);
          } else expect({ ...r, admission: undefined }).toEqual({ ...plain[i], admission: undefined });
        });
        const gone = answer.results.filter(withdrawn).length;
        expect(d.s.status(d.now).queued.total).toBe(loop.status(d.now).queued.total - gone);
        expect(d.s.status(d.now).inFlight).toBe(loop.status(d.now).inFlight);
      }),
      { numRuns: 300 },
    );
  });
});
