import { canonicalHash } from '../crypto/canonical-json';
import type { ApiContext } from '../context';
import { ApiError } from '../../contract/errors';
import type { RunView } from '../../contract/fleet-port';
import { randomHex } from '../crypto/keys';
import type { ParsedRun } from './parse-requests';
import { assertFitsOnePayload } from './payload-limits';
import { rateLimit, shedError } from './shed';
import { resyncTenant } from '../tenant-sync';
import type { TenantRecord } from '../../stores/tenants/tenants';

export const runLink = (runId: string) => `/v1/runs/${runId}`;

export interface IntakeAnswer {
  status: 200 | 202;
  runId: string;
  body: { runId: string; status: RunView['status']; links: { self: string } } & Partial<RunView>;
}

/**
 * `run-<tenant>-<20 random hex>`. Never derived from the idempotency key: a key reused after its
 * retention must name a new run. Retries within the retention find the run through the key's record.
 */
export function newRunId(tenant: string): string {
  return `run-${tenant}-${randomHex(20)}`;
}

async function replay(ctx: ApiContext, runId: string): Promise<IntakeAnswer> {
  const view = await ctx.fleet.getRun(runId);
  const links = { self: runLink(runId) };
  const body = view ? { ...view, links } : { runId, status: 'queued' as const, links };
  return { status: 200, runId, body };
}

/**
 * Submits a validated run for `tenant`: idempotency (same key and body → the same run, 200; another body → 422),
 * the tenant's rate limit, the scheduler's verdict, then the run workflow. A refused request leaves no trace.
 */
export async function submitRun(
  ctx: ApiContext,
  tenant: TenantRecord,
  run: ParsedRun,
): Promise<IntakeAnswer> {
  const { request, agent, input, estimatedTokens, idempotencyKey: key } = run;
  let runId = newRunId(tenant.tenant);
  const receivedAt = ctx.now(); // createdAt is when the door took the request, before the scheduler saw it
  const keyed = request.fairnessKey !== undefined ? { fairnessKey: request.fairnessKey } : {};
  if (key !== undefined) {
    const bodyHash = canonicalHash({
      agent: agent.name,
      input,
      priority: request.priority,
      estimatedTokens,
      ...keyed,
    });
    const claim = await ctx.store.idempotency.claim(
      {
        tenant: tenant.tenant,
        key,
        bodyHash,
        runId,
        createdAt: ctx.now(),
      },
      ctx.pendingClaimTtlMs,
    );
    if (!claim.claimed) {
      const { existing } = claim;
      if (existing.bodyHash !== bodyHash) {
        throw new ApiError(
          'idempotency_conflict',
          'This idempotency key was already used with a different body; use a new key for a new run.',
          { runId: existing.runId },
        );
      }
      if (existing.state === 'pending') {
        throw new ApiError(
          'conflict',
          'A request with this idempotency key is still in progress.',
          undefined,
          1,
        );
      }
      return replay(ctx, existing.runId);
    }
    runId = claim.runId;
  }
  const spec = {
    runId,
    tenant: tenant.tenant,
    agent: agent.name,
    priority: request.priority,
    input,
    estimatedTokens,
    onBudgetExhausted: tenant.settings.onBudgetExhausted ?? 'fail',
    ...keyed,
    createdAt: new Date(receivedAt).toISOString(),
  };
  /** The offer is under way: until it answers, the run may exist and the scheduler may yet hear of it. */
  let offering = false;
  try {
    assertFitsOnePayload(spec, 'The run', 'Send a smaller input.');
    await rateLimit(ctx, tenant.tenant);
    // Start, then submit (an admission always finds its run; a submitter that dies in between leaves
    // a run that offers itself later); a refused request leaves no run behind.
    offering = true;
    const [outcome] = await ctx.fleet.offerRuns([spec], {
      resync: () => resyncTenant(ctx.fleet, tenant, ctx.log),
    });
    offering = false;
    if (outcome?.state === 'finished') {
      // This id ran before (an idempotency key reused after its record was pruned): never run twice.
      if (key !== undefined) await settleClaim(ctx, 'complete', tenant.tenant, key);
      return replay(ctx, runId);
    }
    if (outcome?.state !== 'accepted') {
      throw outcome ? shedError(ctx, outcome.refusal) : new Error(`no offer outcome for ${runId}`);
    }
  } catch (err) {
    // An offer that failed without an answer (the scheduler too slow) may have started the run, and
    // its submission may still land: the key stays pending, so a retry with it waits (409) and then
    // takes the claim over under the same run id, never starting a second run.
    if (key !== undefined && !offering) await settleClaim(ctx, 'release', tenant.tenant, key);
    throw err;
  }
  // The run is accepted whatever the store says now: the answer is 202 either way.
  if (key !== undefined) await settleClaim(ctx, 'complete', tenant.tenant, key);
  ctx.metrics.submissions.inc({ priority: request.priority });
  return { status: 202, runId, body: { runId, status: 'queued', links: { self: runLink(runId) } } };
}

/** Waits before each further try to settle a claim: about 8 s in all, a database restart's worth. */
const SETTLE_BACKOFF_MS = [250, 500, 1000, 2000, 4000];

/**
 * Completes or releases a pending claim, retrying while the store is away for a moment (both are
 * idempotent). Never throws: the request's own answer stands. A claim left pending answers its key's
 * retries 409 until it goes stale, and is then taken over under the same run id (nothing runs twice).
 */
async function settleClaim(
  ctx: ApiContext,
  how: 'complete' | 'release',
  tenant: string,
  key: string,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ctx.store.idempotency[how](tenant, key);
      return;
    } catch (err) {
      const wait = SETTLE_BACKOFF_MS[attempt];
      if (wait === undefined) {
        ctx.log.warn(
          { tenant, key, err: String(err) },
          `idempotency claim could not ${how}: it stays pending`,
        );
        return;
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
