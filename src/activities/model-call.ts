import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { Logger } from 'pino';
import type { FleetActivities } from '../contract/activity-types';
import type { ModelRequest } from '../contract/chat-model';
import type { CallCharges } from './call-charges';
import { chargedCall } from './charged-call';
import type { ChatClient } from './chat-client';
import { clientTimeoutMs } from './model-client';
import { renewalGapMs, renewalOf } from './mailbox';
import type { SchedulerMailbox } from './mailbox';
import { promptBound } from './provider/tokenizer';

/** `ApplicationFailure` type of a call whose worst case exceeds what the run reserved for it. */
export const RESERVATION_SHORT = 'ModelReservationShort';

export interface ModelCallDeps {
  chat: () => ChatClient;
  calls: () => Pick<CallCharges, 'begin' | 'billed' | 'unbilled' | 'uncertain'>;
  mailbox: Pick<SchedulerMailbox, 'renew'>;
  tenantOf: (runId: string) => Promise<string | undefined>;
  log: Logger;
}

/** A request's reservation in the dialect of the model that serves it. */
function measure(chat: ChatClient, request: ModelRequest) {
  const e = chat.endpoint(request.model);
  const promptTokens = promptBound(request, e.dialect);
  return {
    model: e.name,
    dialect: e.dialect,
    promptTokens,
    worstCaseTokens: promptTokens + Math.max(1, Math.ceil(request.maxTokens)),
  };
}

/**
 * A failed call's error, saying what it was charged (`details[0].usedTokens`): the run counts it as
 * used, so its next attempt is reserved anew. Type, retryability and the provider's wait are kept.
 */
function chargedFailure(err: unknown, usedTokens: number): unknown {
  if (usedTokens <= 0 || err instanceof CancelledFailure) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  const app = err instanceof ApplicationFailure ? err : undefined;
  return ApplicationFailure.create({
    type: app?.type ?? e.name,
    message: e.message,
    nonRetryable: app?.nonRetryable ?? false,
    ...(app?.nextRetryDelay !== undefined ? { nextRetryDelay: app.nextRetryDelay } : {}),
    details: [{ usedTokens }],
    cause: e,
  });
}

/** The activities of agents' own model calls (`ctx.model`). */
export function modelCallActivities(
  deps: ModelCallDeps,
): Pick<FleetActivities, 'measureModelCall' | 'modelCall'> {
  return {
    async measureModelCall(request) {
      return measure(deps.chat(), request);
    },

    async modelCall(req) {
      const ctx = Context.current();
      const chat = deps.chat();
      const m = measure(chat, req.request);
      // A reservation that is not a number (a worst case that was not one) covers nothing.
      if (req.reserved !== undefined && !(req.reserved >= m.worstCaseTokens))
        throw ApplicationFailure.create({
          type: RESERVATION_SHORT,
          nonRetryable: true,
          message: `run ${req.runId} call ${req.step} may cost ${m.worstCaseTokens} tokens; ${req.reserved} were reserved`,
        });
      const lease = { runId: req.runId, attempt: req.attempt, perCall: true };
      const who = renewalOf(req);
      const renew = (used: number) =>
        deps.mailbox.renew({ ...who, usedTokens: req.usedSoFar + used }, renewalGapMs(req));
      renew(0);
      const tenant = req.tenant ?? (await deps.tenantOf(req.runId));
      if (tenant === undefined)
        deps.log.warn({ runId: req.runId }, 'run without a tenant: its call goes unbilled');
      // A long call keeps its lease and its heartbeat while the provider thinks.
      const every = Math.max(200, Math.min(req.leaseTtlMs / 3, 10_000));
      const beat = setInterval(() => {
        renew(0);
        if (!ctx.info.isLocal) ctx.heartbeat();
      }, every);
      let chargedIfFailed = 0;
      try {
        const to = tenant === undefined ? undefined : { ...lease, tenant };
        const { result, billed } = await chargedCall(
          deps.calls(),
          to,
          req.step,
          m.worstCaseTokens,
          async (callId) => {
            const { completion } = await chat.chat({
              tenant,
              runId: req.runId,
              step: req.step,
              callId,
              request: req.request,
              promptTokens: m.promptTokens,
              signal: ctx.cancellationSignal,
              timeoutMs: clientTimeoutMs(ctx.info.startToCloseTimeoutMs),
            });
            const raw: unknown = completion.usage.totalTokens;
            // A count that is not a finite, non-negative number is a provider fault: charged the worst case.
            if (typeof raw === 'number' && Number.isFinite(raw) && raw >= 0)
              return { result: completion, billed: Math.ceil(raw) };
            deps.log.warn(
              { runId: req.runId, step: req.step, usage: raw },
              'provider fault: unreadable usage',
            );
            return { result: completion, billed: m.worstCaseTokens };
          },
          (charged) => (chargedIfFailed = charged),
        );
        if (billed > m.worstCaseTokens)
          deps.log.warn(
            { runId: req.runId, step: req.step, billed, reserved: m.worstCaseTokens, dialect: m.dialect },
            'the provider billed a model call above its reservation',
          );
        renew(billed);
        return { completion: result, reservedTokens: m.worstCaseTokens };
      } catch (err) {
        throw chargedFailure(err, chargedIfFailed);
      } finally {
        clearInterval(beat);
      }
    },
  };
}
