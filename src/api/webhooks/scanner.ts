import type { Logger } from 'pino';
import type { FleetPort } from '../../contract/fleet-port';
import { PollLoop } from '../../util/poll-loop';
import { LazyPrune } from '../../stores/idempotency/idempotency';
import type { RunEventSource } from '../../contract/run-events';
import type { OutboxEvent, WebhookStore } from '../../stores/webhooks/webhooks';
import { awaitingEvent, batchEvent, closeEvent } from './run-events';

export interface ScannerDeps {
  store: WebhookStore;
  source: RunEventSource;
  fleet: Pick<FleetPort, 'getBatch'>;
  log: Logger;
  pollMs: number;
  /** How far back each scan reads before the previous one began: visibility's lag, and clock skew. */
  overlapMs: number;
  now?: () => number;
}

const SCAN = 'runs';
/** The CloseTime span one visibility listing of closes covers. */
const WINDOW_MS = 15 * 60_000;
/** Event ids this process recorded lately, so a rescan of the overlap writes nothing. */
const MAX_REMEMBERED = 50_000;

/**
 * Turns what Temporal visibility shows into the outbox's events, for the tenants with endpoints: each
 * pass reads the executions closed since the previous pass began (less the overlap), the runs waiting
 * at a gate, and each batch one of whose items closed. One API process scans at a time (a claim in the
 * store); an event seen again is the same row (its id comes from what it is about).
 */
export class WebhookScanner {
  private readonly now: () => number;
  private readonly seen = new Set<string>();
  private readonly loop: PollLoop;
  private readonly pruner: LazyPrune;

  constructor(private readonly deps: ScannerDeps) {
    this.now = deps.now ?? Date.now;
    this.pruner = new LazyPrune(
      (now) => deps.store.prune(now),
      (err: unknown) => deps.log.warn({ err }, 'webhook prune failed'),
    );
    this.loop = new PollLoop(
      () => this.scanOnce(),
      deps.pollMs,
      (err: unknown) => deps.log.warn({ err }, 'webhook scan failed'),
    );
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /**
   * One pass; false when another process holds the scan. Closes are read in CloseTime windows of
   * WINDOW_MS, the cursor moving past each window once it is recorded, and the claim is renewed on
   * every page, so a pass over a long stretch neither loses its claim nor starts over when it fails.
   */
  async scanOnce(): Promise<boolean> {
    const { store, source, overlapMs } = this.deps;
    const started = this.now();
    const leaseMs = Math.max(60_000, 10 * this.deps.pollMs);
    const claim = await store.claimScan(SCAN, started, leaseMs);
    if (!claim) return false;
    this.pruner.maybe(started);
    let token = claim.claim;
    /** Moves the cursor to `cursor` and renews the claim; throws when another process took the scan. */
    const renew = async (cursor: number) => {
      const until = Math.max(this.now() + leaseMs, token + 1);
      if (!(await store.renewScan(SCAN, token, cursor, until)))
        throw new Error('the webhook scan was taken over by another process');
      token = until;
    };
    let done = false;
    try {
      const tenants = await store.tenantsWithEndpoints();
      if (tenants.length > 0) {
        for (let from = (claim.cursor ?? started) - overlapMs; from < started;) {
          const to = Math.min(started, from + WINDOW_MS);
          await this.scanWindow(tenants, from, to, () => renew(0));
          await renew(to);
          from = to;
        }
        await source.awaitingApproval(tenants, async (page) => {
          for (const e of page) await this.record(awaitingEvent(e, this.now()));
          await renew(0);
        });
      }
      done = true;
    } finally {
      // A failed release must not hide the pass's own error (the claim lapses anyway).
      await store.finishScan(SCAN, done ? started : 0).catch((err: unknown) => {
        if (done) throw err;
        this.deps.log.warn({ err }, 'webhook scan could not release its claim');
      });
    }
    return true;
  }

  /** The closes of [from, to) and the batches they end. */
  private async scanWindow(tenants: string[], from: number, to: number, renew: () => Promise<void>) {
    const batches = new Map<string, number>();
    await this.deps.source.closedBetween(tenants, from, to, async (page) => {
      for (const e of page) {
        const ev = closeEvent(e);
        if (ev) await this.record(ev);
        if (e.batchId && e.closedAt !== null)
          batches.set(e.batchId, Math.max(batches.get(e.batchId) ?? 0, e.closedAt));
      }
      await renew();
    });
    for (const [batchId, at] of batches) {
      const view = await this.deps.fleet.getBatch(batchId);
      const ev = view && batchEvent(view, at);
      if (ev) await this.record(ev);
    }
  }

  private async record(ev: OutboxEvent): Promise<void> {
    if (this.seen.has(ev.eventId)) return;
    await this.deps.store.recordEvent(ev, this.now());
    if (this.seen.size >= MAX_REMEMBERED) this.seen.clear();
    this.seen.add(ev.eventId);
  }
}
