import type { Logger } from 'pino';
import type { DeliveryJob, DeliveryKey, WebhookStore } from '../../stores/webhooks/webhooks';
import type { RetryPolicy } from '../../config';
import { PollLoop } from '../../util/poll-loop';
import { retryAfterOf, retryDelayMs } from './backoff';
import { postWebhook, type SendResult } from './send';
import { signedHeaders } from './signing';
import type { WebhookTargets } from './targets';

/** The delivery settings (WEBHOOK_* in src/config.ts). */
export interface DeliverySettings {
  timeoutMs: number;
  pollMs: number;
  retry: RetryPolicy;
  targets: WebhookTargets;
}

/** Deliveries in flight at once per process, and per endpoint (a dead receiver cannot take every slot). */
const MAX_IN_FLIGHT = 16;
const MAX_PER_ENDPOINT = 2;

export interface DelivererDeps {
  store: WebhookStore;
  settings: DeliverySettings;
  log: Logger;
  now?: () => number;
  send?: typeof postWebhook;
}

/**
 * Sends the outbox's due deliveries from the API process, never from a workflow: a slow or dead
 * receiver costs a slot here and nothing to any run. Each delivery is claimed exclusively (several API
 * processes share the store) for longer than one attempt can take, sent signed, and its attempt
 * recorded with the next state: delivered on a 2xx, else retried with backoff until its attempts run out.
 */
export class WebhookDeliverer {
  private readonly now: () => number;
  private readonly send: typeof postWebhook;
  private readonly inFlight = new Map<Promise<void>, string>();
  private readonly loop: PollLoop;

  constructor(private readonly deps: DelivererDeps) {
    this.now = deps.now ?? Date.now;
    this.send = deps.send ?? postWebhook;
    this.loop = new PollLoop(
      () => this.deliverDue(),
      deps.settings.pollMs,
      (err: unknown) => deps.log.warn({ err }, 'webhook delivery pass failed'),
    );
  }

  start(): void {
    this.loop.start();
  }

  /** Stops looking for due deliveries and waits for those in flight (each ends within its timeout). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.settle();
  }

  /** Claims what is due and free slots allow, and starts sending each; does not wait for the answers. */
  async deliverDue(): Promise<void> {
    const free = MAX_IN_FLIGHT - this.inFlight.size;
    if (free <= 0) return;
    const perEndpoint = new Map<string, number>();
    for (const ep of this.inFlight.values()) perEndpoint.set(ep, (perEndpoint.get(ep) ?? 0) + 1);
    let started = 0;
    // At most the cap per endpoint comes back: a hung endpoint's backlog cannot crowd out the others.
    for (const key of await this.deps.store.due(this.now(), free * 4, MAX_PER_ENDPOINT)) {
      if (started >= free || this.loop.stopped) return;
      if ((perEndpoint.get(key.endpointId) ?? 0) >= MAX_PER_ENDPOINT) continue;
      if (!(await this.deliverInBackground(key))) continue;
      perEndpoint.set(key.endpointId, (perEndpoint.get(key.endpointId) ?? 0) + 1);
      started += 1;
    }
  }

  /** Waits for every delivery started so far (tests). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.inFlight.keys()]);
  }

  /** One signed POST; whatever throws on the way (a bad secret or URL) is a failed attempt too. */
  private async attempt(job: DeliveryJob, at: number): Promise<SendResult> {
    try {
      const headers = signedHeaders(job.secret, job.eventId, Math.floor(at / 1000), job.body);
      return await this.send(job.url, headers, job.body, this.deps.settings);
    } catch (err) {
      const error = `not sent: ${err instanceof Error ? err.message : String(err)}`;
      return { status: null, answer: '', error, retryAfter: undefined, durationMs: this.now() - at };
    }
  }

  private async deliverInBackground(key: DeliveryKey): Promise<boolean> {
    const { store, settings } = this.deps;
    // The claim outlasts the attempt's timeout by a margin, so no other process sends it meanwhile.
    const job = await store.claim(key, this.now(), settings.timeoutMs + 30_000);
    if (!job) return false;
    const p: Promise<void> = (async () => {
      const at = this.now();
      const r = await this.attempt(job, at);
      const n = job.attempts + 1;
      const ok = r.status !== null && r.status >= 200 && r.status < 300;
      const delay = ok ? null : retryDelayMs(n, settings.retry, retryAfterOf(r.retryAfter, this.now()));
      const state = ok ? 'delivered' : delay === null ? 'failed' : 'pending';
      const error = r.error ?? (ok ? null : `answered ${r.status}`);
      const recorded = await store.recordAttempt(
        job,
        { n, at, status: r.status, answer: r.answer, error, durationMs: r.durationMs },
        state,
        this.now() + (delay ?? 0),
      );
      if (!recorded)
        this.deps.log.warn({ ...key }, 'webhook delivery claim lapsed before its attempt was recorded');
    })()
      .catch((err: unknown) => this.deps.log.warn({ err, ...key }, 'webhook delivery failed'))
      .finally(() => this.inFlight.delete(p));
    this.inFlight.set(p, key.endpointId);
    return true;
  }
}
