import type { SubmitResult, UnitSubmission } from '../scheduler/types';
import { mapLimit } from '../util/map-limit';
import type { OfferOptions, OfferOutcome, RunOfferPorts, RunSpec, StartOptions } from './fleet-port';
import { admitNoticeOf } from './admit-notice';

export type { OfferOptions, OfferOutcome, RunOfferPorts, StartOutcome } from './fleet-port';

/**
 * Offers runs the one way every path does (single runs, events, batch chunks, batch resumes):
 * start each run's workflow first, then one scheduler message for the running ones, so an admission
 * always finds its run; a run that already finished is never offered again. Only a run this call
 * created and the scheduler refused is discarded (unless told to keep it): a run an earlier offer
 * started may yet be admitted by that offer's update, and a message that failed (timed out,
 * unanswered) may still be applied later, so neither deletes anything: such a run offers itself
 * again when the scheduler does not know it. One outcome per spec, in order. With `decideFirst`
 * new runs are submitted first ({@link offerDecidedFirst}).
 */
export async function offerRuns(
  ports: RunOfferPorts,
  specs: RunSpec[],
  opts: OfferOptions = {},
): Promise<OfferOutcome[]> {
  const discard = (opts.onRefused ?? 'discard') === 'discard';
  if (opts.decideFirst === true && discard && opts.redrive !== true)
    return offerDecidedFirst(ports, specs, opts);
  const startOpts = opts.redrive ? { redrive: true } : undefined;
  const started = await mapLimit(specs, opts.concurrency ?? 16, (s) => ports.startRun(s, startOpts));
  // A re-drive whose new execution is already running (an earlier re-drive started it) is not offered
  // again: that execution offers itself, and its spec's attempt is not this one's.
  const rerun = (i: number) => started[i] === 'existing' && opts.redrive === true;
  const live = specs.filter((_, i) => started[i] !== 'finished' && !rerun(i));
  const created = new Set(specs.filter((_, i) => started[i] === 'started').map((s) => s.runId));
  const results = await ask(
    ports,
    live.map((s) => unitOf(s, opts)),
    opts,
  );
  const outcomes = specs.map((s, i): OfferOutcome => {
    if (started[i] === 'finished') return { runId: s.runId, state: 'finished' };
    if (rerun(i)) return { runId: s.runId, state: 'accepted', duplicate: true, held: false };
    return outcomeOf(s.runId, results.get(s.runId)!);
  });
  if (discard) {
    const refused = outcomes.filter((o) => o.state === 'refused' && created.has(o.runId));
    await mapLimit(refused, opts.concurrency ?? 16, (o) => ports.discardRun(o.runId));
  }
  return outcomes;
}

/**
 * Decide, then start: one scheduler message asks for each new run's admission (`admitNow`) before
 * any workflow exists. A run admitted in the answer starts with its admission (one workflow task,
 * no admit signal, no re-offer timer); one the fair order did not admit now stays queued in its
 * place and its run starts to wait for the admission's notice (a notice that comes before the start
 * waits a little for it: `ADMIT_NOTICE_GRACE_MS`); one a closing chain did not keep (`withdrawn`)
 * is offered the usual way, started first; a refused one leaves nothing behind, as nothing was started. A unit the scheduler knew before (a retry of a message that did land) is
 * started to check on the scheduler at once: its admission, if any, went to no run, so it comes
 * again only after that lease's expiry, and never twice at once. An admitted run whose start fails
 * holds its lease until the lease expires, unused; its unit is then submitted anew by a retry.
 */
export async function offerDecidedFirst(
  ports: RunOfferPorts,
  specs: RunSpec[],
  opts: OfferOptions,
): Promise<OfferOutcome[]> {
  const results = await ask(
    ports,
    specs.map((s) => ({ ...unitOf(s, opts), admitNow: true })),
    opts,
  );
  const withdrawn = (r: SubmitResult | undefined) => r?.accepted === true && r.withdrawn === true;
  /** How to start the run: null, not at all; `queued`, to wait for its admission's notice. */
  const startOf = (r: SubmitResult | undefined): StartOptions | null => {
    if (!r?.accepted || withdrawn(r)) return null;
    if (r.admission) return { start: { admission: admitNoticeOf(r.admission) } };
    return r.duplicate ? { start: { checkNow: true } } : { queued: true };
  };
  const started = await mapLimit(specs, opts.concurrency ?? 16, async (s) => {
    const start = startOf(results.get(s.runId));
    return start === null ? null : ports.startRun(s, start);
  });
  const later = specs.filter((s) => withdrawn(results.get(s.runId)));
  const usual = new Map(
    later.length === 0
      ? []
      : (await offerRuns(ports, later, { ...opts, decideFirst: false })).map((o) => [o.runId, o]),
  );
  return specs.map((s, i): OfferOutcome => {
    const offered = usual.get(s.runId);
    if (offered) return offered;
    if (started[i] === 'finished') return { runId: s.runId, state: 'finished' };
    return outcomeOf(s.runId, results.get(s.runId)!);
  });
}

function unitOf(s: RunSpec, opts: OfferOptions): UnitSubmission {
  return {
    runId: s.runId,
    tenant: s.tenant,
    priority: s.priority,
    cost: s.estimatedTokens,
    ...(s.pool ? { pool: s.pool } : {}),
    ...(s.fairnessKey ? { fairnessKey: s.fairnessKey } : {}),
    ...(s.firstAttempt ? { attempt: s.firstAttempt } : {}),
    ...(opts.redrive ? { redrive: true } : {}),
  };
}

/** One scheduler message for `units`, and once more for those whose tenant it did not know (after a resync). */
async function ask(
  ports: RunOfferPorts,
  units: UnitSubmission[],
  opts: OfferOptions,
): Promise<Map<string, SubmitResult>> {
  const results = new Map<string, SubmitResult>();
  const send = async (batch: UnitSubmission[]) => {
    if (batch.length === 0) return;
    const answers = await ports.submit(batch);
    batch.forEach((u, i) => {
      const r = answers.find((a) => a.runId === u.runId) ?? answers[i];
      if (!r) throw new Error(`the scheduler gave no answer for run ${u.runId}`);
      results.set(u.runId, r);
    });
  };
  await send(units);
  const unknown = units.filter((u) => {
    const r = results.get(u.runId);
    return r !== undefined && !r.accepted && r.code === 'unknown_tenant';
  });
  if (opts.resync && unknown.length > 0) {
    for (const tenant of new Set(unknown.map((u) => u.tenant))) await opts.resync(tenant);
    await send(unknown);
  }
  return results;
}

function outcomeOf(runId: string, r: SubmitResult): OfferOutcome {
  if (r.accepted) return { runId, state: 'accepted', duplicate: r.duplicate, held: r.held };
  const { code, message, retryAfterSeconds } = r;
  return { runId, state: 'refused', refusal: { code, message, retryAfterSeconds } };
}
