import { ApplicationFailure } from '@temporalio/workflow';
import { checks } from './run-activities';
import { RunCancelled } from './run-failure';
import type { RunLifecycle } from './run-lifecycle';

/**
 * Per-step reservation: before each step whose worst case the attempt's reservation does not cover,
 * the run asks the scheduler for a top-up; refused, it parks or fails with budget_exhausted (its
 * tenant's setting). Steps of one run reserve one after another, so parallel steps do not ask twice
 * for the same tokens.
 */
export class Reservation {
  private reserving: Promise<void> = Promise.resolve();

  constructor(private readonly run: RunLifecycle) {}

  /** Covers `worst` more tokens once the steps before it have been covered. */
  reserveFor(worst: number): Promise<void> {
    const p = this.reserving.then(() => this.cover(worst));
    this.reserving = p.catch(() => undefined);
    return p;
  }

  /**
   * Makes the current attempt's reservation cover `worst` more tokens: asks for a top-up when it does
   * not; on refusal the run queues again (its lease is gone) or, the budget being spent, parks or
   * fails per its tenant's setting. Counts `worst` as under way when it returns.
   */
  private async cover(worst: number): Promise<void> {
    const { state, spec } = this.run;
    for (;;) {
      if (state.cancelRequested) throw new RunCancelled();
      if (state.revoked) await this.run.queueAgain(worst + state.stepsWorst);
      const need = state.uncovered + worst;
      if (need <= 0) break;
      const attempt = state.attempt;
      const r = await checks.requestTopUp({ runId: spec.runId, attempt, tokens: need });
      if (state.attempt !== attempt) continue; // revoked and queued again meanwhile: ask anew
      if (r.granted) {
        state.reserved += need;
        break;
      }
      if (r.code === 'no_lease') {
        // The scheduler holds no lease for this attempt (it expired; its revoke may be on its way).
        state.revoked = true;
        continue;
      }
      const why =
        `Tenant ${spec.tenant}'s token budget cannot cover the run's next step: ` +
        `${need} tokens asked, ${r.remaining} left`;
      if ((spec.onBudgetExhausted ?? 'fail') === 'fail')
        throw ApplicationFailure.create({ type: 'BudgetExhausted', message: `${why}.`, nonRetryable: true });
      // Park: give the slot back and queue again for what the step needs; the scheduler admits the run
      // when the budget covers it (the period rolled or the budget was raised): `waitingOn: budget`.
      await this.run.release('gated');
      await this.run.queueAgain(worst + state.stepsWorst);
    }
    state.stepsWorst += worst;
  }
}
