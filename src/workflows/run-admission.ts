import { condition } from '@temporalio/workflow';
import type { OfferResult } from '../contract/activity-types';
import type { RunSpec } from '../contract/fleet-port';
import { checks } from './run-activities';
import type { RunState } from './run-state';

/** What the admission wait reads and sets of the run it waits for. */
export interface AwaitingRun {
  readonly state: RunState;
  readonly spec: RunSpec;
  readonly opts: { reofferFirstSeconds: number; reofferMaxSeconds: number };
  readonly jitter: number;
  readonly failsOnBudget: boolean;
  nudged: boolean;
  budgetRefusal: string | null;
  settled(): boolean;
  unit(attempt: number): Parameters<typeof checks.offerRun>[0];
}

/** Never re-offer sooner than this, whatever a refusal's Retry-After says (0 would spin). */
export const REOFFER_FLOOR_MS = 5_000;

/**
 * A check the scheduler did not answer, or refused because it drains, is tried again within this
 * long (and the ±10% jitter), whatever its Retry-After: neither a chain coming back nor a resume tells a run the chain
 * does not know, so this bounds how long such a run waits once the chain takes work again.
 */
export const REOFFER_AWAY_MAX_MS = 30_000;

/**
 * The wait before the next check after `r` (0: the check succeeded). A failed check waits its
 * Retry-After (at least the floor), ×2 while it keeps failing (`failing`, the wait after the last
 * failure), up to `maxMs`; up to {@link REOFFER_AWAY_MAX_MS} while the chain is away or draining.
 */
export function failingWaitMs(r: OfferResult, failing: number, maxMs: number): number {
  if (r.state !== 'refused' && r.state !== 'unavailable') return 0;
  const away = r.state === 'unavailable' || r.code === 'draining';
  const cap = away ? Math.min(maxMs, REOFFER_AWAY_MAX_MS) : maxMs;
  return Math.min(cap, Math.max(REOFFER_FLOOR_MS, r.retryAfterSeconds * 1000, failing * 2));
}

/**
 * Waits for the admission. While it does not come, the run checks that the scheduler knows it and
 * re-offers itself when not (the scheduler was lost or reset, or the submitter died between start
 * and submit), backing off ×2 up to the cap; the check is a query, batched per worker. A check the
 * scheduler did not answer or refused is tried again after its Retry-After (at least the floor),
 * backing off ×2 from there while it keeps failing ({@link failingWaitMs}): a run nudged to a chain
 * still starting up must not fall back on the standing interval, which is a safety net of minutes.
 */
export async function awaitAdmission(run: AwaitingRun, checkNow: boolean): Promise<void> {
  const { state, spec, opts, jitter } = run;
  const maxMs = opts.reofferMaxSeconds * 1000;
  // The first check is spread over [1, 2)× the first interval, so a batch started together does not
  // check together; later ones back off ×2 with ±10% jitter.
  let wait = Math.min(maxMs, opts.reofferFirstSeconds * 1000 * (1 + jitter));
  /** The wait after a check that failed (0 while checks succeed). */
  let failing = 0;
  for (let check = checkNow; !run.settled(); check = true) {
    if (check) {
      run.nudged = false;
      // A revoke that overtook its admission means the admission may never come: ask anew now.
      if (state.revokedEarly >= state.attempt) state.requeue();
      let r = await checks.offerRun(run.unit(state.attempt));
      if (r.state === 'ended') {
        // The scheduler saw this attempt end (revoked before its admission reached us): ask anew.
        state.requeue();
        r = await checks.offerRun(run.unit(state.attempt));
      }
      // A single run (not a batch's item, which its batch offers again) refused for its budget on a
      // re-offer (the scheduler lost it meanwhile) ends like a queued unit the budget cannot cover.
      if (
        r.state === 'refused' &&
        r.code === 'budget_exhausted' &&
        run.failsOnBudget &&
        spec.batchId === undefined
      ) {
        run.budgetRefusal = r.message ?? 'Tenant budget exhausted.';
        break;
      }
      failing = failingWaitMs(r, failing, maxMs);
    }
    // ±10% jitter (from the run id, deterministic) so runs started together do not all check at once.
    const woken = await condition(
      () => run.settled() || run.nudged || state.revokedEarly >= state.attempt,
      Math.round((failing || wait) * (0.9 + jitter * 0.2)),
    );
    if (woken) {
      if (run.settled()) break;
      wait = Math.min(maxMs, opts.reofferFirstSeconds * 1000); // nudged: check now, back off anew
      failing = 0;
      continue;
    }
    if (failing === 0) wait = Math.min(maxMs, wait * 2);
  }
}
