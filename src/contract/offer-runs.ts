import type { Refusal, SubmitResult, UnitSubmission } from '../scheduler/types';
import { mapLimit } from '../util/map-limit';
import type { RunSpec } from './fleet-port';

/** `started`: the run's workflow runs (new or existing); `finished`: it ran before and is closed. */
export type StartOutcome = 'started' | 'finished';

/** The three moves of offering a run, as the fleet (or a test's fleet) makes them. */
export interface RunOfferPorts {
  /** Starts the run's workflow, idempotent on its id; `redrive` starts a failed one afresh. */
  startRun(spec: RunSpec, opts?: { redrive?: boolean }): Promise<StartOutcome>;
  /** Offers units to the scheduler; one result per unit. */
  submit(units: UnitSubmission[]): Promise<SubmitResult[]>;
  /** Removes a started run that holds no slot. */
  discardRun(runId: string): Promise<void>;
}

export interface OfferOptions {
  /** A failed run started again on purpose (batch resume): a new execution, and the core forgets it ended. */
  redrive?: boolean;
  /**
   * What becomes of a refused run's workflow: `discard` (default; a refused request leaves nothing
   * behind) or `keep` (it was accepted before, e.g. a batch item: it offers itself again later).
   */
  onRefused?: 'discard' | 'keep';
  /**
   * Called once per tenant the scheduler does not know (`unknown_tenant`: it restarted without the
   * tenant); the tenant's runs are then offered once more.
   */
  resync?: (tenant: string) => Promise<void>;
  /** Workflow starts in flight at once. */
  concurrency?: number;
}

export type OfferOutcome =
  | { runId: string; state: 'finished' }
  | { runId: string; state: 'accepted'; duplicate: boolean; held: boolean }
  | { runId: string; state: 'refused'; refusal: Refusal };

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
