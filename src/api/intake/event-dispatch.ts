import type { Logger } from 'pino';
import type { FleetPort } from '../../contract/fleet-port';
import type { ApiStore } from '../../stores/api/api-store';
import type { EventRecord, EventRunRecord, RunRefusal } from '../../stores/events/event-store';
import { MAX_DISPATCH_ATTEMPTS, retryDelayMs } from '../events/retry';
import { resyncTenant } from '../tenant-sync';

export interface EventDispatcherDeps {
  fleet: FleetPort;
  store: ApiStore;
  log: Logger;
  now?: () => number;
  /**
   * How long a claim on an event lasts unless renewed: a live dispatcher renews it every third of
   * this while it works on the event, however long its offers take; a dead one's lapses, and
   * another takes the event over.
   */
  claimMs?: number;
  /** How often the background loop looks for due events. */
  pollMs?: number;
}

type Outcome =
  { kind: 'started' } | { kind: 'refused'; refusal: RunRefusal } | { kind: 'error'; message: string };

/**
 * Turns recorded events into runs: for each of an event's runs not yet started, offers the unit to the
 * scheduler (fair, shed like any run) and starts its workflow, both idempotent on the run id derived from
 * the event id and trigger. A refusal is kept with its Retry-After and tried again with backoff. Runs from
 * the request that recorded the event, and from a loop that picks up whatever a dead process left.
 */
export class EventDispatcher {
  private readonly claimMs: number;
  private readonly pollMs: number;
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly deps: Required<Pick<EventDispatcherDeps, 'now'>> & EventDispatcherDeps;

  constructor(deps: EventDispatcherDeps) {
    this.deps = { ...deps, now: deps.now ?? Date.now };
    this.claimMs = deps.claimMs ?? 15_000;
    this.pollMs = deps.pollMs ?? 1_000;
  }

  /** Starts the background loop (the API process runs one). */
  start(): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.pass = this.dispatchDue()
        .catch((err: unknown) => this.deps.log.warn({ err }, 'event dispatch pass failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.pollMs).unref();
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.pass;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Dispatches in the background (the request has already answered); errors are logged, the loop retries. */
  kick(tenant: string, eventId: string): void {
    if (this.stopped) return;
    const p: Promise<void> = this.dispatch(tenant, eventId, true)
      .then(() => undefined)
      .catch((err: unknown) => this.deps.log.warn({ err, tenant, eventId }, 'event dispatch failed'))
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** One pass over the due events; returns when each was tried. */
  async dispatchDue(limit = 50): Promise<void> {
    for (const { tenant, eventId } of await this.deps.store.events.due(this.deps.now(), limit)) {
      if (this.stopped) return;
      await this.dispatch(tenant, eventId, false);
    }
  }

  /** Tries the event's unstarted runs once, if this process can claim it; returns whether it did. */
  async dispatch(tenant: string, eventId: string, force: boolean): Promise<boolean> {
    const { store, now } = this.deps;
    const at = now();
    if (!(await store.events.claim(tenant, eventId, at, this.claimMs, force))) return false;
    // Held while this process works on the event: an offer may take longer than a claim (the scheduler
    // answering slowly), and two dispatchers must never offer the same run at once.
    let until = at + this.claimMs;
    const renew = setInterval(() => {
      const next = now() + this.claimMs;
      store.events.renewClaim(tenant, eventId, until, next).then(
        (held) => {
          if (held) until = next;
        },
        (err: unknown) => this.deps.log.warn({ err, tenant, eventId }, 'event claim not renewed'),
      );
    }, this.claimMs / 3);
    try {
      return await this.dispatchClaimed(tenant, eventId);
    } finally {
      clearInterval(renew);
    }
  }

  private async dispatchClaimed(tenant: string, eventId: string): Promise<boolean> {
    const { store, now } = this.deps;
    const event = await store.events.get(tenant, eventId);
    if (!event) return false;
    let maxRetryAfter = 0;
    let open = 0;
    let errored = 0;
    for (const run of event.runs) {
      if (run.status !== 'pending' && run.status !== 'refused') continue;
      const outcome = await this.startOne(event, run);
      if (outcome.kind === 'started') {
        await store.events.updateRun(tenant, eventId, run.trigger, 'started', null, now());
        continue;
      }
      open += 1;
      if (outcome.kind === 'refused') {
        maxRetryAfter = Math.max(maxRetryAfter, outcome.refusal.retryAfterSeconds);
        await store.events.updateRun(tenant, eventId, run.trigger, 'refused', outcome.refusal, now());
      } else {
        errored += 1;
        this.deps.log.warn(
          { tenant, eventId, runId: run.runId, error: outcome.message },
          'event run not started',
        );
      }
    }
    const attempts = event.attempts + 1;
    // Refusals give up after MAX_DISPATCH_ATTEMPTS (the event stays refused, replayable); an unreachable
    // fleet never makes an answered event give up: at least once means until it starts.
    if (open === 0 || (errored === 0 && attempts >= MAX_DISPATCH_ATTEMPTS)) {
      await store.events.finish(tenant, eventId, 'settled', attempts, now());
    } else {
      await store.events.finish(
        tenant,
        eventId,
        'pending',
        attempts,
        now() + retryDelayMs(attempts, maxRetryAfter),
      );
    }
    return true;
  }

  private async startOne(event: EventRecord, run: EventRunRecord): Promise<Outcome> {
    const { fleet, store, log } = this.deps;
    try {
      const tenant = await store.tenants.get(event.tenant);
      if (!tenant) {
        return {
          kind: 'refused',
          refusal: {
            code: 'unknown_tenant',
            message: `Tenant ${event.tenant} no longer exists.`,
            retryAfterSeconds: 60,
          },
        };
      }
      // Start, then submit, as for every run: an admission always finds its run, and starting is
      // idempotent on the run id (a process that died after starting it is harmless). A refused run
      // is discarded (nothing left behind) and offered again later.
      const [outcome] = await fleet.offerRuns(
        [
          {
            runId: run.runId,
            tenant: event.tenant,
            agent: run.agent,
            priority: run.priority,
            input: run.input,
            estimatedTokens: run.estimatedTokens,
            ...(run.fairnessKey !== undefined ? { fairnessKey: run.fairnessKey } : {}),
            onBudgetExhausted: tenant.settings.onBudgetExhausted ?? 'fail',
            createdAt: new Date(event.receivedAt).toISOString(),
          },
        ],
        { resync: () => resyncTenant(fleet, tenant, log) },
      );
      if (outcome?.state === 'refused') {
        const { code, message, retryAfterSeconds } = outcome.refusal;
        return {
          kind: 'refused',
          refusal: {
            code,
            message: message || `Refused: ${code}.`,
            retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)),
          },
        };
      }
      return { kind: 'started' };
    } catch (err) {
      return { kind: 'error', message: err instanceof Error ? err.message : String(err) };
    }
  }
}
