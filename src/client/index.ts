import {
  agentsApi,
  approvalsApi,
  batchesApi,
  eventsApi,
  triggersApi,
  webhookSecretsApi,
  type Agents,
  type Approvals,
  type Batches,
  type Events,
  type Triggers,
  type WebhookSecrets,
} from './resources';
import { runsApi, type Runs } from './runs';
import { schedulesApi, type Schedules } from './schedules';
import { webhooksApi, type Webhooks } from './webhooks';
import { createTransport, type ClientOptions } from './transport';

/**
 * The typed client of Fairway's HTTP API (`fairway/client`): no server code, only `fetch`.
 *
 * ```ts
 * const fairway = createClient({ baseUrl: 'http://localhost:3000', apiKey: process.env.FAIRWAY_API_KEY! });
 * const run = await fairway.runs.start(research, { question: 'Why is the sky blue?' });
 * const { answer } = await run.result();
 * ```
 */
export interface FairwayClient {
  runs: Runs;
  approvals: Approvals;
  agents: Agents;
  events: Events;
  triggers: Triggers;
  webhookSecrets: WebhookSecrets;
  batches: Batches;
  /** Recurring runs (cron or interval) on Temporal Schedules. */
  schedules: Schedules;
  /** Webhooks out: endpoints for run and batch events, and their deliveries (docs/webhooks.md). */
  webhooks: Webhooks;
  /** The caller's tenant: settings, queue depth and ledger (`GET /v1/tenants/me`). */
  tenant(): Promise<Record<string, unknown>>;
}

export function createClient(opts: ClientOptions): FairwayClient {
  const http = createTransport(opts);
  return {
    runs: runsApi(http),
    approvals: approvalsApi(http),
    agents: agentsApi(http),
    events: eventsApi(http),
    triggers: triggersApi(http),
    webhookSecrets: webhookSecretsApi(http),
    batches: batchesApi(http),
    schedules: schedulesApi(http),
    webhooks: webhooksApi(http),
    tenant: () => http.request('GET', '/v1/tenants/me'),
  };
}

export { FairwayError, isFairwayError, type FairwayErrorCode } from './errors';
export { wasRejected } from './runs';
export type {
  AgentRef,
  InputOf,
  ResultOf,
  RunHandle,
  Runs,
  ResultOptions,
  WaitOptions,
  DecisionAnswer,
} from './runs';
export type { ClientOptions } from './transport';
export type { Schedules, ScheduleSpec, ScheduleView, OverlapPolicy } from './schedules';
export type {
  Webhooks,
  WebhookAttemptView,
  WebhookCreated,
  WebhookDeliveryView,
  WebhookEventType,
  WebhookView,
} from './webhooks';
export type * from './types';
export type {
  Agents,
  Approvals,
  Batches,
  Events,
  SendEventOptions,
  Triggers,
  WebhookSecrets,
} from './resources';
