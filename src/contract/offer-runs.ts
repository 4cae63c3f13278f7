import type { SubmitResult, UnitSubmission } from '../scheduler/types';
import { mapLimit } from '../util/map-limit';
import type { OfferOptions, OfferOutcome, RunOfferPorts, RunSpec } from './fleet-port';

export type { OfferOptions, OfferOutcome, RunOfferPorts, StartOutcome } from './fleet-port';

/**
 * Offers runs the one way every path does (single runs, events, batch chunks, batch resumes):
 * start each run's workflow first, then one scheduler message for the running ones, so an admission
 * always finds its run; a run that already finished is never offered again. Only a run this call
 * created and the scheduler refused is discarded (unless told to keep it): a run an earlier offer
 * started may yet be admitted by that offer's update, and a message that failed (timed out,
 * unanswered) may still be applied later, so neither deletes anything: such a run offers itself
 * again when the scheduler does not know it. One outcome per spec, in order.
 */
export async function offerRuns(
  ports: RunOfferPorts,
  specs: RunSpec[],
  opts: OfferOptions = {},
): Promise<OfferOutcome[]> {
  const discard = (opts.onRefused ?? 'discard') === 'discard';
  const startOpts = opts.redrive ? { redrive: true } : undefined;
  const started = await mapLimit(specs, opts.concurrency ?? 16, (s) => ports.startRun(s, startOpts));
  // A re-drive whose new execution is already running (an earlier re-drive started it) is not offered
  // again: that execution offers itself, and its spec's attempt is not this one's.
  const rerun = (i: number) => started[i] === 'existing' && opts.redrive === true;
  const live = specs.filter((_, i) => started[i] !== 'finished' && !rerun(i));
  const created = new Set(specs.filter((_, i) => started[i] === 'started').map((s) => s.runId));
  const unitOf = (s: RunSpec): UnitSubmission => ({
    runId: s.runId,
    tenant: s.tenant,
    priority: s.priority,
    cost: s.estimatedTokens,
    ...(s.pool ? { pool: s.pool } : {}),
    ...(s.firstAttempt ? { attempt: s.firstAttempt } : {}),
    ...(opts.redrive ? { redrive: true } : {}),
  });
  const results = new Map<string, SubmitResult>();
  const ask = async (batch: RunSpec[]) => {
    if (batch.length === 0) return;
    const answers = await ports.submit(batch.map(unitOf));
    batch.forEach((s, i) => {
      const r = answers.find((a) => a.runId === s.runId) ?? answers[i];
      if (!r) throw new Error(`the scheduler gave no answer for run ${s.runId}`);
      results.set(s.runId, r);
    });
  };
  await ask(live);
  const unknown = live.filter((s) => {
    const r = results.get(s.runId);
    return r !== undefined && !r.accepted && r.code === 'unknown_tenant';
  });
  if (opts.resync && unknown.length > 0) {
    for (const tenant of new Set(unknown.map((s) => s.tenant))) await opts.resync(tenant);
    await ask(unknown);
  }
  const outcomes = specs.map((s, i): OfferOutcome => {
    if (started[i] === 'finished') return { runId: s.runId, state: 'finished' };
    if (rerun(i)) return { runId: s.runId, state: 'accepted', duplicate: true, held: false };
    const r = results.get(s.runId)!;
    if (r.accepted) return { runId: s.runId, state: 'accepted', duplicate: r.duplicate, held: r.held };
    const { code, message, retryAfterSeconds } = r;
    return { runId: s.runId, state: 'refused', refusal: { code, message, retryAfterSeconds } };
  });
  if (discard) {
    const refused = outcomes.filter((o) => o.state === 'refused' && created.has(o.runId));
    await mapLimit(refused, opts.concurrency ?? 16, (o) => ports.discardRun(o.runId));
  }
  return outcomes;
}
