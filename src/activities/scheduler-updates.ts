import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import type { UpdateDefinition } from '@temporalio/common';
import type { Logger } from 'pino';
import type { UpdatePermits } from '../stores/update-permits/update-permits';

/** The first pause while every permit is held; it doubles (with jitter) up to MAX_WAIT_MS. */
const MIN_WAIT_MS = 10;
const MAX_WAIT_MS = 500;

/**
 * Tenant and operator updates (tenant saves and re-syncs from the API, settings, drain, resume) that
 * every API process together may have in flight: the share of the scheduler's 10 left after the
 * workers' WORKER_UPDATE_PERMITS and 2 per API process's submit coalescer.
 */
export const OPERATOR_UPDATE_PERMITS = 2;

/** How the workers of a fleet share the scheduler's updates in flight (WORKER_UPDATE_PERMITS). */
export interface PermitOptions {
  /** How many updates every worker together may have in flight at once. */
  slots: number;
  /** A permit's lease (ms), renewed while its update is on its way: a dead holder's frees itself. */
  ttlMs: number;
}

/**
 * One permit of the fleet's at a time around each scheduler update a worker sends: the workers'
 * updates in flight never exceed `slots`, however many workers there are. A worker that finds none
 * free waits with backoff, and so does one whose store fails for a moment: lacking a permit fails
 * nothing, only cancellation (`signal`) ends the wait.
 */
export class PermitGate {
  private seq = 0;
  private readonly prefix = randomUUID();

  constructor(
    private readonly permits: UpdatePermits,
    private readonly schedulerId: string,
    private readonly opts: PermitOptions,
    private readonly log: Logger,
  ) {}

  /** Runs `fn` while holding a permit, released as soon as `fn` settles. */
  async hold<R>(fn: () => Promise<R>, signal?: AbortSignal): Promise<R> {
    const holder = `${this.prefix}-${++this.seq}`;
    const slot = await this.acquire(holder, signal);
    const { schedulerId, permits } = this;
    const renew = setInterval(() => {
      permits.renew(schedulerId, slot, holder, Date.now() + this.opts.ttlMs).then(
        (held) => {
          if (!held) this.log.warn({ slot }, 'update permit expired while its update was on its way');
        },
        (err: unknown) => this.log.warn({ err: String(err) }, 'could not renew an update permit'),
      );
    }, this.opts.ttlMs / 3);
    renew.unref();
    try {
      return await fn();
    } finally {
      clearInterval(renew);
      // A release that fails leaves the lease to run out: the permit is free within ttlMs anyway.
      await permits
        .release(schedulerId, slot, holder)
        .catch((err: unknown) => this.log.warn({ err: String(err) }, 'could not release an update permit'));
    }
  }

  private async acquire(holder: string, signal: AbortSignal | undefined): Promise<number> {
    for (let wait = MIN_WAIT_MS; ; wait = Math.min(MAX_WAIT_MS, wait * 2)) {
      if (signal?.aborted) throw new CancelledFailure('cancelled while waiting for an update permit');
      try {
        const slot = await this.permits.acquire(
          this.schedulerId,
          this.opts.slots,
          holder,
          Date.now(),
          this.opts.ttlMs,
        );
        if (slot !== undefined) return slot;
      } catch (err) {
        this.log.warn({ err: String(err) }, 'update permits unreachable; trying again');
      }
      await pause(wait * (0.5 + Math.random()), signal);
    }
  }
}

/** Sends one update to the scheduler from a worker: the only way a worker does (see `schedulerUpdates`). */
export type SchedulerUpdate = <Ret, Args extends [unknown, ...unknown[]]>(
  def: UpdateDefinition<Ret, Args>,
  args: Args,
  /**
   * `signal` ends the wait for a permit and the update; `timeoutMs` bounds the update once sent;
   * `updateId` makes a repeat of it one update (the server answers a repeat to the same run once).
   */
  opts?: { signal?: AbortSignal; timeoutMs?: number; updateId?: string },
) => Promise<Ret>;

/**
 * The worker's scheduler updates, each under a permit of `gate` (without one, as on a worker of a
 * unit test, unbounded). Every worker-side update goes through here, so none bypasses the share.
 */
export function schedulerUpdates(
  client: Client,
  schedulerId: string,
  gate: PermitGate | undefined,
): SchedulerUpdate {
  return (def, args, opts = {}) => {
    const send = () => {
      const signals = [
        ...(opts.signal ? [opts.signal] : []),
        ...(opts.timeoutMs !== undefined ? [AbortSignal.timeout(opts.timeoutMs)] : []),
      ];
      const update = () =>
        client.workflow
          .getHandle(schedulerId)
          .executeUpdate(def, { args, ...(opts.updateId !== undefined ? { updateId: opts.updateId } : {}) });
      return signals.length > 0 ? client.withAbortSignal(AbortSignal.any(signals), update) : update();
    };
    return gate ? gate.hold(send, opts.signal) : send();
  };
}

/** Resolves after `ms`, or rejects with a CancelledFailure once `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CancelledFailure('cancelled while waiting for an update permit'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
