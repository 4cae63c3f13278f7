import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetScheduler, defaultTenantSettings } from '../../../src/scheduler';
import type { Admission, SubmitResult, UnitSubmission } from '../../../src/scheduler';
import { submitEach } from '../../../src/workflows/scheduler-validators';
import { T0, fleetSettings, openGovernor } from './helpers';

const TENANT = 'acme';
const TTL_MS = 60_000;
const REQUESTS = 6;
const runIdOf = (i: number) => `run-${TENANT}-${String(i).padStart(20, '0')}`;

/** A run workflow as the protocol sees it: its attempt, its admission, what it was told. */
interface RunModel {
  attempt: number;
  admitted: number | null;
  revokedEarly: number;
  finished: boolean;
  /** Steps it ran under an admission (an admitted run completes in one step). */
  completions: number;
}

/** A message on its way to the scheduler: an API's submit (answered to it) or a run's own. */
interface Message {
  units: UnitSubmission[];
  /** The API request it answers; none for the start-first resubmit (its answer changes nothing). */
  from: 'api' | 'usual';
}

type Op =
  | { k: 'offer'; i: number }
  | { k: 'deliver'; pick: number; twice: boolean; loseAnswer: boolean }
  | { k: 'answer'; pick: number }
  | { k: 'loop' }
  | { k: 'notice'; pick: number; patient: boolean }
  | { k: 'check'; pick: number }
  | { k: 'step'; pick: number }
  | { k: 'renew'; pick: number }
  | { k: 'tick'; ms: number }
  | { k: 'lose' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.integer({ min: 0, max: REQUESTS - 1 }).map((i) => ({ k: 'offer' as const, i })),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant('deliver' as const),
      pick: fc.nat(),
      twice: fc.boolean(),
      loseAnswer: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.nat().map((pick) => ({ k: 'answer' as const, pick })) },
  { weight: 3, arbitrary: fc.constant({ k: 'loop' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({ k: fc.constant('notice' as const), pick: fc.nat(), patient: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.nat().map((pick) => ({ k: 'check' as const, pick })) },
  { weight: 3, arbitrary: fc.nat().map((pick) => ({ k: 'step' as const, pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ k: 'renew' as const, pick })) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(1_000, 30_000, TTL_MS + 1).map((ms) => ({ k: 'tick' as const, ms })),
  },
  { weight: 1, arbitrary: fc.constant({ k: 'lose' as const }) },
);

/**
 * Decide, then start, as a whole protocol over the real core: the API's `admitNow` submit (its
 * answer delivered late, twice or never), the start with the admission, a unit kept in the queue (its
 * notice may come before its run is started) or the start-first fallback of a withdrawn one, the loop's notices (late, or to no run yet), lease expiry, the runs' own checks and
 * renewals, and the scheduler lost (a new chain recovering). The API, the runs and the scheduler
 * follow src/contract/offer-runs.ts, src/workflows/run-admission.ts and the submit handler.
 */
class World {
  constructor(private readonly keepQueued: boolean) {}
  now = T0;
  core = World.chain(T0, false);
  readonly inbox: Message[] = [];
  readonly answers: { runIds: string[]; results: SubmitResult[] }[] = [];
  /** Admission notices and revocations on their way to runs (they outlive a lost chain). */
  readonly notices: ({ kind: 'admit'; a: Admission } | { kind: 'revoke'; runId: string; attempt: number })[] =
    [];
  readonly runs = new Map<string, RunModel>();
  /** Requests the API is offering (waiting for an answer); the rest may be offered (again). */
  readonly offering = new Set<string>();
  /** An admission handed to a run whose workflow had already closed (never allowed to run it). */
  lateAdmissions = 0;

  static chain(now: number, recovering: boolean): FleetScheduler {
    const core = FleetScheduler.create(
      {
        settings: fleetSettings({ concurrency: 2, leaseTtlSeconds: TTL_MS / 1000 }),
        governor: openGovernor(),
      },
      now,
    );
    if (recovering) core.beginRecovery(now);
    core.upsertTenant(TENANT, defaultTenantSettings({ maxQueued: 3, maxInFlight: 2 }), now);
    return core;
  }

  apply(op: Op): void {
    switch (op.k) {
      case 'offer': {
        const runId = runIdOf(op.i);
        if (this.offering.has(runId) || this.runs.get(runId)?.finished) return;
        this.offering.add(runId);
        this.inbox.push({ units: [this.unit(runId, 0, true)], from: 'api' });
        return;
      }
      case 'deliver': {
        if (this.inbox.length === 0) return;
        const i = op.pick % this.inbox.length;
        const m = this.inbox[i]!;
        if (!op.twice) this.inbox.splice(i, 1); // twice: a duplicate stays to land again
        const results = this.handle(m.units);
        if (m.from !== 'api') return;
        if (op.loseAnswer || op.twice) {
          // The API heard nothing (or gave up): it fails the request, and the client retries it.
          for (const u of m.units) this.offering.delete(u.runId);
          return;
        }
        this.answers.push({ runIds: m.units.map((u) => u.runId), results });
        return;
      }
      case 'answer': {
        if (this.answers.length === 0) return;
        const [a] = this.answers.splice(op.pick % this.answers.length, 1);
        a!.runIds.forEach((runId, i) => this.answered(runId, a!.results[i]!));
        return;
      }
      case 'loop': {
        for (const e of this.core.expireLeases(this.now))
          this.notices.push({ kind: 'revoke', runId: e.runId, attempt: e.attempt });
        for (const a of this.core.admit(this.now)) this.notices.push({ kind: 'admit', a });
        return;
      }
      case 'notice': {
        if (this.notices.length === 0) return;
        const [n] = this.notices.splice(op.pick % this.notices.length, 1);
        const run = this.runs.get(n!.kind === 'admit' ? n!.a.runId : n!.runId);
        if (n!.kind === 'revoke') {
          if (run) this.revoke(run, n!.runId, n!.attempt);
          return;
        }
        const a = n!.a;
        // No workflow to signal: the notice waits a little for its run to be started (patient), then
        // reports the run unreachable, and its slot comes back.
        if (!run && op.patient) this.notices.push(n!);
        else if (!run)
          this.core.release(
            [{ runId: a.runId, attempt: a.attempt, usedTokens: 0, outcome: 'cancelled' }],
            this.now,
          );
        else this.admit(run, a.attempt);
        return;
      }
      case 'check': {
        const [runId, run] = this.pick(op.pick, (r) => !r.finished && r.admitted === null);
        if (run) this.check(runId, run);
        return;
      }
      case 'step': {
        const [runId, run] = this.pick(op.pick, (r) => !r.finished && r.admitted !== null);
        if (!run) return;
        run.completions++;
        run.finished = true;
        this.core.release(
          [{ runId, attempt: run.admitted!, usedTokens: 1, outcome: 'completed', tenant: TENANT }],
          this.now,
        );
        return;
      }
      case 'renew': {
        const [runId, run] = this.pick(op.pick, (r) => !r.finished && r.admitted !== null);
        if (run)
          this.core.renew(
            [
              {
                runId,
                attempt: run.admitted!,
                usedTokens: 0,
                tenant: TENANT,
                priority: 'standard',
                cost: 10,
              },
            ],
            this.now,
          );
        return;
      }
      case 'tick':
        this.now += op.ms;
        return;
      case 'lose':
        // A new chain: messages to the lost one fail (their requests are retried), notices it sent
        // still arrive; the watchdog nudges every queued run to check at once.
        this.core = World.chain(this.now, true);
        for (const m of this.inbox.splice(0))
          if (m.from === 'api') for (const u of m.units) this.offering.delete(u.runId);
        for (const a of this.answers.splice(0)) for (const runId of a.runIds) this.offering.delete(runId);
        for (const [runId, run] of this.runs)
          if (!run.finished && run.admitted === null) this.check(runId, run);
        return;
    }
  }

  private unit(runId: string, attempt: number, admitNow: boolean): UnitSubmission {
    return {
      runId,
      tenant: TENANT,
      priority: 'standard',
      cost: 10,
      attempt,
      ...(admitNow ? { admitNow } : {}),
    };
  }

  /** The scheduler's submit handler. */
  private handle(units: UnitSubmission[]): SubmitResult[] {
    return submitEach(units, (good) => {
      const { results, others } = this.core.submitAdmittingNow(good, this.now, {
        keepQueued: this.keepQueued,
      });
      for (const a of others) this.notices.push({ kind: 'admit', a });
      return results;
    });
  }

  /** The API hears the answer to its decide-first submit and starts the run (offerDecidedFirst). */
  private answered(runId: string, r: SubmitResult): void {
    this.offering.delete(runId);
    if (!r.accepted) return; // refused: nothing was started; the client may try again later
    if (r.withdrawn) {
      // The usual way: started first, then submitted.
      this.start(runId);
      this.inbox.push({ units: [this.unit(runId, 0, false)], from: 'usual' });
      return;
    }
    // Admitted: started with its admission; known before: started to check at once; kept in the
    // queue: started to wait for its notice.
    const run = this.start(runId);
    if (r.admission && run.attempt === r.admission.attempt && !run.finished)
      this.admit(run, r.admission.attempt);
    else if (!r.admission && r.duplicate) this.check(runId, run); // checkNow
  }

  /** Starts the run's workflow (idempotent on its id: an existing or closed one is left as it is). */
  private start(runId: string): RunModel {
    let run = this.runs.get(runId);
    if (!run) {
      run = { attempt: 0, admitted: null, revokedEarly: -1, finished: false, completions: 0 };
      this.runs.set(runId, run);
    }
    return run;
  }

  private admit(run: RunModel, attempt: number): void {
    if (run.finished) {
      this.lateAdmissions++;
      return;
    }
    if (attempt !== run.attempt || run.admitted !== null) return;
    run.admitted = attempt;
  }

  private revoke(run: RunModel, runId: string, attempt: number): void {
    if (run.finished) return;
    if (run.admitted === attempt) {
      // Revoked while it ran: it queues again before its next step.
      run.admitted = null;
      run.attempt++;
      this.offer(runId, run);
    } else if (attempt >= run.attempt) run.revokedEarly = Math.max(run.revokedEarly, attempt);
  }

  /** The run's check (run-admission.ts): known → wait; else offer itself, a newer attempt if that one ended. */
  private check(runId: string, run: RunModel): void {
    if (run.revokedEarly >= run.attempt) run.attempt++;
    if (this.core.isKnown(runId)) return;
    this.offer(runId, run);
  }

  private offer(runId: string, run: RunModel): void {
    const [r] = this.core.submit([this.unit(runId, run.attempt, false)], this.now);
    if (r?.accepted && r.duplicate && !this.core.isKnown(runId)) {
      run.attempt++;
      this.core.submit([this.unit(runId, run.attempt, false)], this.now);
    }
  }

  private pick(i: number, ok: (r: RunModel) => boolean): [string, RunModel | undefined] {
    const list = [...this.runs].filter(([, r]) => ok(r));
    const e = list[i % Math.max(1, list.length)];
    return e ? [e[0], e[1]] : ['', undefined];
  }

  /** Everything in flight lands, runs finish, leases expire, runs check; the client retries its failures. */
  settle(): void {
    for (let round = 0; round < 40; round++) {
      while (this.inbox.length) this.apply({ k: 'deliver', pick: 0, twice: false, loseAnswer: false });
      while (this.answers.length) this.apply({ k: 'answer', pick: 0 });
      this.apply({ k: 'loop' });
      while (this.notices.length) this.apply({ k: 'notice', pick: 0, patient: false });
      for (let i = 0; i < REQUESTS; i++) this.apply({ k: 'step', pick: 0 });
      for (const [runId, run] of this.runs)
        if (!run.finished && run.admitted === null) this.check(runId, run);
      for (let i = 0; i < REQUESTS; i++) {
        const runId = runIdOf(i);
        if (!this.runs.has(runId)) this.apply({ k: 'offer', i });
      }
      this.now += TTL_MS + 1;
    }
  }
}

describe('decide, then start: the protocol (property)', () => {
  it('late, duplicated and lost answers, the API or the scheduler lost between decision and start: every run once, no lease left', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 120 }), fc.boolean(), (ops, keepQueued) => {
        const w = new World(keepQueued);
        for (const op of ops) w.apply(op);
        w.settle();
        for (let i = 0; i < REQUESTS; i++) {
          const run = w.runs.get(runIdOf(i));
          // No unit lost: every request's run ran; none ran twice.
          expect(run?.completions, `run ${i}`).toBe(1);
        }
        // No lease leaked past its expiry, nothing left in line.
        w.apply({ k: 'tick', ms: TTL_MS + 1 });
        w.apply({ k: 'loop' });
        expect(w.core.status(w.now)).toMatchObject({ inFlight: 0, queued: { total: 0 } });
      }),
      { numRuns: 400 },
    );
  });
});
