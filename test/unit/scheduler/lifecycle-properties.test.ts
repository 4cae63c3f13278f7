import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetScheduler } from '../../../src/scheduler';
import type { Admission, Release, Renewal, UnitSubmission } from '../../../src/scheduler';
import { T0, makeFleet } from './helpers';

type ToCore = { k: 'submit'; u: UnitSubmission } | { k: 'release'; r: Release } | { k: 'renew'; r: Renewal };
type ToRun = { k: 'admit' | 'revoke'; runId: string; attempt: number };

/** What the run workflow (src/workflows/run.ts, run-state.ts) keeps of its lifecycle. */
interface Run {
  id: string;
  tenant: string;
  state: 'new' | 'waiting' | 'running' | 'done';
  attempt: number;
  /** Running, and the scheduler took the lease back: the next step queues again; a finish releases anyway. */
  revoked: boolean;
  attemptUsage: number;
  usage: number;
  /** Tokens its steps billed again when a workflow task ran them once more. */
  rebilled: number;
  revokedEarly: number;
  /** The messages of the run's last workflow task (its last step's renewal, its release). */
  lastTask: ToCore[];
}

const RUNS = 6;
const MAX_QUEUED = 4;
const op = fc.oneof(
  fc.record({ k: fc.constant('start' as const), i: fc.nat(RUNS - 1) }),
  fc.record({ k: fc.constant('toCore' as const), i: fc.nat(50), dup: fc.boolean() }),
  fc.record({ k: fc.constant('toRun' as const), i: fc.nat(50), dup: fc.boolean() }),
  fc.record({ k: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 40_000 }) }),
  fc.record({
    k: fc.constant('step' as const),
    i: fc.nat(RUNS - 1),
    tokens: fc.integer({ min: 1, max: 50 }),
  }),
  fc.record({ k: fc.constant('finish' as const), i: fc.nat(RUNS - 1) }),
  fc.record({ k: fc.constant('resubmitFinished' as const), i: fc.nat(RUNS - 1) }),
  fc.record({ k: fc.constant('reexecute' as const), i: fc.nat(RUNS - 1) }),
  fc.record({ k: fc.constant('restart' as const) }),
  fc.record({ k: fc.constant('offer' as const), i: fc.nat(RUNS - 1) }),
  fc.record({ k: fc.constant('forget' as const), n: fc.integer({ min: 1, max: RUNS + 2 }) }),
);

/**
 * Random interleavings of the run lifecycle against the core: duplicated, late and re-ordered
 * messages both ways, resubmission of finished runs, revokes that overtake admits, restarts from the
 * continue-as-new snapshot, waiting runs re-offering themselves, and a finished run's last workflow
 * task executed again (its local activities are at least once: a workflow task that timed out runs
 * its step and its release once more, possibly minutes later). The run does what run.ts does: a
 * revoke marks the attempt, the next step queues again, a finish releases the attempt it holds.
 *
 * Checked after every step: one lease per run at most, no attempt admitted twice, the queue within
 * its cap, `spent` never above what runs used, and `completed` never above the runs that completed.
 * After everything is delivered: `spent` equals the settled usage when no run retried, and every
 * completed run is counted exactly once, with either memory.
 */
function lifecycleProperty(
  /**
   * Ended runs the core remembers: undefined for MAX_ENDED_RUNS (never filled here), or RUNS + 1,
   * which other runs ending (`forget`: short runs of tenant f) push the oldest finished runs out of,
   * as a flood does (1,024 ended runs go by in ~100 s). A run forgotten is taken as new when its
   * finished attempt is submitted again (a retried batch chunk): its admission finds the workflow
   * closed, and the scheduler releases the lease as cancelled.
   */
  endedMemory: number | undefined,
) {
  const forgets = endedMemory !== undefined;
  return fc.property(fc.array(op, { minLength: 1, maxLength: 150, size: 'max' }), (ops) => {
    const fresh = () =>
      makeFleet({
        settings: { concurrency: 3, leaseTtlSeconds: 30 },
        tenants: { a: { maxQueued: MAX_QUEUED, maxInFlight: 3 }, f: { maxQueued: 1000, maxInFlight: 3 } },
        ...(endedMemory === undefined ? {} : { endedMemory }),
      });
    let core = fresh();
    let now = T0;
    const runs: Run[] = Array.from({ length: RUNS }, (_, i) => ({
      id: `r${i}`,
      tenant: 'a',
      state: 'new',
      attempt: 0,
      revoked: false,
      attemptUsage: 0,
      usage: 0,
      rebilled: 0,
      revokedEarly: -1,
      lastTask: [],
    }));
    const byId = new Map(runs.map((r) => [r.id, r]));
    const toCore: ToCore[] = [];
    const toRun: ToRun[] = [];
    const admitted = new Set<string>();
    /** Runs that completed: this tenant's, and the other tenant's short ones. */
    let others = 0;
    let made = 0;
    const done = () => runs.filter((r) => r.state === 'done').length + others;
    const unit = (r: Run): UnitSubmission => ({
      runId: r.id,
      tenant: r.tenant,
      priority: 'standard',
      cost: 50,
      attempt: r.attempt,
    });
    const requeue = (r: Run) => {
      r.attempt++;
      r.attemptUsage = 0;
      r.revoked = false;
      r.state = 'waiting';
      r.lastTask = [];
      toCore.push({ k: 'submit', u: unit(r) });
    };
    const coreStep = () => {
      for (const a of core.expireLeases(now)) toRun.push({ k: 'revoke', runId: a.runId, attempt: a.attempt });
      for (let more = core.admit(now); more.length > 0; more = core.admit(now)) coreAdmitted(more);
    };
    const coreAdmitted = (admissions: Admission[]) => {
      for (const a of admissions) {
        const key = `${a.runId}#${a.attempt}`;
        // A core that forgot a finished run takes a late submission of it as new; the closed run
        // workflow refuses the admission, and the lease expires.
        const refused = forgets && byId.get(a.runId)?.state === 'done';
        if (!refused) expect(admitted.has(key), `admitted twice: ${key}`).toBe(false);
        admitted.add(key);
        if (a.tenant === 'f') {
          // Another tenant's short run: done at once; its end pushes the oldest finished run out.
          core.release(
            [{ runId: a.runId, attempt: a.attempt, usedTokens: 0, outcome: 'completed', tenant: 'f' }],
            now,
          );
          others++;
          continue;
        }
        if (refused) {
          // Its notice finds no open workflow: the scheduler releases the lease as cancelled at once
          // (notifyAdmissions → unreachable).
          core.release([{ runId: a.runId, attempt: a.attempt, usedTokens: 0, outcome: 'cancelled' }], now);
          continue;
        }
        expect(byId.get(a.runId)!.state, `finished ${a.runId} admitted`).not.toBe('done');
        toRun.push({ k: 'admit', runId: a.runId, attempt: a.attempt });
      }
    };
    const deliverToCore = (m: ToCore) => {
      if (m.k === 'submit') core.submit([m.u], now);
      else if (m.k === 'release') core.release([m.r], now);
      else core.renew([m.r], now);
    };
    // RunState.admit / RunState.revoke.
    const deliverToRun = (m: ToRun) => {
      const r = byId.get(m.runId)!;
      if (r.state === 'done') return;
      if (m.k === 'admit') {
        if (m.attempt !== r.attempt || r.state !== 'waiting') return;
        r.state = 'running';
        r.revoked = m.attempt <= r.revokedEarly;
        r.attemptUsage = 0;
      } else if (m.attempt === r.attempt && r.state === 'running') r.revoked = true;
      else if (m.attempt >= r.attempt) r.revokedEarly = Math.max(r.revokedEarly, m.attempt);
    };
    const take = <T>(q: T[], i: number, dup: boolean): T | undefined => {
      if (q.length === 0) return undefined;
      const at = i % q.length;
      return dup ? q[at] : q.splice(at, 1)[0];
    };

    for (const o of ops) {
      if (o.k === 'start') {
        const r = runs[o.i]!;
        if (r.state === 'new') {
          r.state = 'waiting';
          toCore.push({ k: 'submit', u: unit(r) });
        }
      } else if (o.k === 'toCore') {
        const m = take(toCore, o.i, o.dup);
        if (m) deliverToCore(m);
      } else if (o.k === 'toRun') {
        const m = take(toRun, o.i, o.dup);
        if (m) deliverToRun(m);
      } else if (o.k === 'tick') now += o.ms;
      else if (o.k === 'step') {
        const r = runs[o.i]!;
        // A step of a revoked attempt queues the run again first (cover → queueAgain).
        if (r.state === 'running' && r.revoked) requeue(r);
        else if (r.state === 'running') {
          r.usage += o.tokens;
          r.attemptUsage += o.tokens;
          const renewal: ToCore = {
            k: 'renew',
            r: { runId: r.id, attempt: r.attempt, usedTokens: r.attemptUsage, tenant: r.tenant, cost: 50 },
          };
          toCore.push(renewal);
          r.lastTask = [renewal];
        }
      } else if (o.k === 'finish') {
        // The last step done, the run releases the attempt it holds, revoked or not.
        const r = runs[o.i]!;
        if (r.state === 'running') {
          r.state = 'done';
          const release: ToCore = {
            k: 'release',
            r: {
              runId: r.id,
              attempt: r.attempt,
              usedTokens: r.attemptUsage,
              outcome: 'completed',
              tenant: 'a',
            },
          };
          toCore.push(release);
          r.lastTask = [...r.lastTask, release];
        }
      } else if (o.k === 'reexecute') {
        // The finished run's last workflow task did not complete: its local activities run again
        // (its step calls the model once more, billed; the same renewal and release go out again).
        const r = runs[o.i]!;
        if (r.state === 'done') {
          for (const m of r.lastTask) if (m.k === 'renew') r.rebilled += m.r.usedTokens ?? 0;
          toCore.push(...r.lastTask);
        }
      } else if (o.k === 'resubmitFinished') {
        const r = runs[o.i]!;
        if (r.state === 'done') toCore.push({ k: 'submit', u: { ...unit(r), attempt: 0 } });
      } else if (o.k === 'restart') {
        core = FleetScheduler.restore(JSON.parse(JSON.stringify(core.snapshot())), {
          ...(endedMemory === undefined ? {} : { endedMemory }),
        });
      } else if (o.k === 'forget') {
        if (forgets)
          for (let k = 0; k < o.n; k++)
            core.submit([{ runId: `f${made++}`, tenant: 'f', priority: 'standard', cost: 1 }], now);
      } else if (o.k === 'offer') {
        // A waiting run's check: a revoke that overtook its admission → next attempt; the core does
        // not know it → it submits; an ended attempt → next one.
        const r = runs[o.i]!;
        if (r.state === 'waiting') {
          if (r.revokedEarly >= r.attempt) r.attempt++;
          if (!core.isKnown(r.id)) {
            const [res] = core.submit([unit(r)], now);
            if (res?.accepted && res.duplicate) requeue(r);
          }
        }
      }
      coreStep();
      const st = core.status(now);
      expect(st.inFlight).toBeLessThanOrEqual(3 + RUNS); // adoption may exceed the cap, never duplicate
      expect(st.queued.total - (made - others)).toBeLessThanOrEqual(RUNS);
      if (!forgets) for (const r of runs) if (r.state === 'done') expect(core.explain(r.id, now)).toBeNull();
      const spent = core.tenantStatus('a', now)!.ledger.spent;
      expect(spent).toBeLessThanOrEqual(runs.reduce((n, r) => n + r.usage + r.rebilled, 0));
      expect(st.counters.completed, 'completed counted above the runs that completed').toBeLessThanOrEqual(
        done(),
      );
    }

    // Deliver everything still in flight (no more losses), in order.
    for (let guard = 0; guard < 1000 && (toCore.length > 0 || toRun.length > 0); guard++) {
      while (toCore.length > 0) deliverToCore(toCore.shift()!);
      while (toRun.length > 0) deliverToRun(toRun.shift()!);
      coreStep();
    }
    const settledUsage = runs.filter((r) => r.state === 'done').reduce((n, r) => n + r.usage, 0);
    const st = core.status(now);
    const spent = core.tenantStatus('a', now)!.ledger.spent;
    expect(spent).toBeLessThanOrEqual(runs.reduce((n, r) => n + r.usage + r.rebilled, 0));
    expect(st.counters.completed).toBeLessThanOrEqual(done());
    // Leases that ended by a release: one per completed run at most (a core that forgot a run may
    // admit a repeat of its submission, whose lease a repeat of its release ends, uncounted).
    const c = st.counters;
    if (!forgets) expect(c.admitted + c.adopted - c.expired - st.inFlight).toBeLessThanOrEqual(done());
    // This chain admitted every run: nothing to adopt (a renewal of a run it forgot is not taken back).
    expect(c.adopted).toBe(0);
    expect(c.completed, 'each completed run counted once').toBe(done());
    // Runs that only ever ran one attempt settle exactly; revoked attempts are charged what
    // their last delivered renewal reported (a lower bound), so: settled ≤ spent + unreported.
    if (runs.every((r) => r.attempt === 0 && r.rebilled === 0 && (r.state === 'done' || r.usage === 0)))
      expect(spent).toBe(settledUsage);
  });
}

describe('run lifecycle under random interleavings', () => {
  it('one lease per run, no re-admission, queue within cap, spent = settled usage, each completion counted once', () => {
    fc.assert(lifecycleProperty(undefined), { numRuns: 500 });
  });

  it('with a memory that forgets finished runs: each completion still counted once, none adopted', () => {
    fc.assert(lifecycleProperty(RUNS + 1), { numRuns: 1000 });
  });
});
