import type { SubmitResult, UnitSubmission } from '../scheduler/types';
import { mapLimit } from '../util/map-limit';
import type { OfferOptions, OfferOutcome, RunOfferPorts, RunSpec } from './fleet-port';

export type { OfferOptions, OfferOutcome, RunOfferPorts, StartOutcome } from './fleet-port';

/**
 * Offers runs the one way every path does (single runs, events, batch chunks, batch resumes):
 * start each run's workflow first, then one scheduler message for the started ones, so an admission
 * always finds its run; a run that already finished is never offered again. A refused run is
 * discarded unless told to keep it; when the scheduler cannot be asked (the message failed),
 * discarded runs are removed before the error is passed on. One outcome per spec, in order.
 */
export async function offerRuns(
  ports: RunOfferPorts,
  specs: RunSpec[],
  opts: OfferOptions = {},
): Promise<OfferOutcome[]> {
  const discard = (opts.onRefused ?? 'discard') === 'discard';
  const startOpts = opts.redrive ? { redrive: true } : undefined;
  const started = await mapLimit(specs, opts.concurrency ?? 16, (s) => ports.startRun(s, startOpts));
  const live = specs.filter((_, i) => started[i] === 'started');
  const unitOf = (s: RunSpec): UnitSubmission => ({
    runId: s.runId,
    tenant: s.tenant,
    priority: s.priority,
    cost: s.estimatedTokens,
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
  try {
    await ask(live);
    const unknown = live.filter((s) => {
      const r = results.get(s.runId);
      return r !== undefined && !r.accepted && r.code === 'unknown_tenant';
    });
    if (opts.resync && unknown.length > 0) {
      for (const tenant of new Set(unknown.map((s) => s.tenant))) await opts.resync(tenant);
      await ask(unknown);
    }
  } catch (err) {
    if (discard) await Promise.all(live.map((s) => ports.discardRun(s.runId)));
    throw err;
  }
  const outcomes = specs.map((s, i): OfferOutcome => {
    if (started[i] === 'finished') return { runId: s.runId, state: 'finished' };
    const r = results.get(s.runId)!;
    if (r.accepted) return { runId: s.runId, state: 'accepted', duplicate: r.duplicate, held: r.held };
    const { code, message, retryAfterSeconds } = r;
    return { runId: s.runId, state: 'refused', refusal: { code, message, retryAfterSeconds } };
  });
  if (discard) {
    const refused = outcomes.filter((o) => o.state === 'refused');
    await mapLimit(refused, opts.concurrency ?? 16, (o) => ports.discardRun(o.runId));
  }
  return outcomes;
}
