import { admit } from './admission';
import type { CoreState } from './core';
import { submit } from './door';
import { cancel } from './lease-lifecycle';
import type { Admission, SubmitResult, UnitSubmission } from './types';

/** What a submit that may admit at once answers, and the admissions it made for units already waiting. */
export interface SubmitAnswer {
  results: SubmitResult[];
  /** Units queued before this message that the same round admitted: their runs are told as usual. */
  others: Admission[];
}

type Accepted = Extract<SubmitResult, { accepted: true }>;

/** How a submit that may admit at once treats a fresh `admitNow` unit the round did not admit. */
export interface AdmitNowOptions {
  /** False: no round now (the chain is closing): every fresh `admitNow` unit is withdrawn. */
  round?: boolean;
  /**
   * True: a fresh unit the round did not admit stays queued in its place (its run is started next
   * and told of its admission as usual); false: it is withdrawn.
   */
  keepQueued?: boolean;
}

/**
 * Submits, then (when some unit asks `admitNow`) runs the admission round at once: the same round the
 * loop would run next, so fairness, floors, budgets and the governor decide as ever. An `admitNow`
 * unit this message queued and the round admitted carries its admission in its answer. One the round
 * did not admit stays queued in its place (`keepQueued`, the default): its run is started next and is
 * told of its admission as any queued run, so no unit of a lower lane overtakes it meanwhile.
 * Otherwise it is taken out of the queue again unrecorded (not ended, not counted: it is submitted
 * again once its run is started) and answered `withdrawn`; so is every one while the chain closes
 * (`round` false), whose admissions could no longer be told. An `admitNow` unit that was known before
 * (queued, leased, ended) is answered as any repeat: nothing is withdrawn or admitted for it here.
 * Without an `admitNow` unit this is `submit`.
 */
export function submitAdmittingNow(
  s: CoreState,
  units: readonly UnitSubmission[],
  now: number,
  { round = true, keepQueued = true }: AdmitNowOptions = {},
): SubmitAnswer {
  if (!units.some((u) => u.admitNow === true)) return { results: submit(s, units, now), others: [] };
  const fresh = units.map(
    (u) => u.admitNow === true && !s.queued.has(u.runId) && s.leases.get(u.runId) === undefined,
  );
  const results = submit(s, units, now);
  /** Each fresh `admitNow` unit this message queued: its place in `results`, and its answer. */
  const asking = new Map<string, [number, Accepted]>();
  results.forEach((r, i) => {
    if (fresh[i] && r.accepted && !r.duplicate) asking.set(r.runId, [i, r]);
  });
  const others: Admission[] = [];
  for (const a of round && asking.size > 0 ? admit(s, now, Infinity) : []) {
    const mine = asking.get(a.runId);
    if (!mine) others.push(a);
    else {
      results[mine[0]] = { ...mine[1], admission: a };
      asking.delete(a.runId);
    }
  }
  if (round && keepQueued) return { results, others };
  cancel(s, [...asking.keys()], false);
  s.counters.submitted -= asking.size;
  for (const [i, r] of asking.values()) results[i] = { ...r, withdrawn: true };
  return { results, others };
}
