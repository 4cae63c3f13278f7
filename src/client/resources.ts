import { signBody, SIGNATURE_HEADER } from './signing';
import type { AgentRef, InputOf } from './runs';
import type { Transport } from './transport';
import type {
  AgentInfo,
  Approval,
  BatchCreated,
  BatchDetails,
  BatchCreateOptions,
  BatchOpenOptions,
  CloudEvent,
  EventView,
  Page,
  TriggerSpec,
  TriggerView,
} from './types';

const enc = encodeURIComponent;
const nameOf = (agent: AgentRef) => (typeof agent === 'string' ? agent : agent.name);

export interface Approvals {
  /** The caller's runs waiting at a gate, with what each asks to approve. */
  list(query?: { limit?: number; cursor?: string; tenant?: string }): Promise<Page<Approval>>;
}

export interface Agents {
  /** The agents the API knows, with their input JSON Schemas. */
  list(): Promise<{ items: AgentInfo[] }>;
  /** One agent; 404 `unknown_agent` for a name the API does not know. */
  get(name: string): Promise<AgentInfo>;
}

export interface SendEventOptions {
  /**
   * Sign the delivery with this source's webhook secret instead of sending the API key (as a webhook
   * sender does); `tenant` names the tenant the secret belongs to.
   */
  signed?: { secret: string; tenant: string };
}

export interface Events {
  /** Records the event; the tenant's matching triggers start their runs. 202 new, 200 seen before. */
  send(event: CloudEvent, opts?: SendEventOptions): Promise<EventView>;
  list(query?: { limit?: number; outcome?: EventView['outcome'] }): Promise<{ items: EventView[] }>;
  get(eventId: string, opts?: { source?: string }): Promise<EventView>;
  replay(eventId: string, opts?: { source?: string }): Promise<EventView & { replayed: boolean }>;
}

export interface Triggers {
  put<A extends AgentRef>(
    name: string,
    spec: Omit<TriggerSpec, 'agent'> & { agent: A; input?: InputOf<A> | unknown },
  ): Promise<TriggerView>;
  list(): Promise<{ items: TriggerView[] }>;
  get(name: string): Promise<TriggerView>;
  delete(name: string): Promise<void>;
}

export interface WebhookSecrets {
  /** Creates or rotates the source's secret; the answer shows it this once. */
  create(source: string): Promise<{ source: string; secret: string; rotated: boolean }>;
  list(): Promise<{ items: { source: string; createdAt: string }[] }>;
  delete(source: string): Promise<void>;
}

export interface Batches {
  /** One run per item, each typed by the agent, fairly scheduled against other tenants. */
  create<A extends AgentRef>(agent: A, items: InputOf<A>[], opts?: BatchCreateOptions): Promise<BatchCreated>;
  get(batchId: string): Promise<BatchDetails>;
  /** Re-drives the failed items only. */
  resume(batchId: string): Promise<{ batchId: string; resumed: number }>;
  /** A batch sent in parts: open, append parts 0, 1, 2, …, then commit. */
  open(agent: AgentRef, opts?: BatchOpenOptions): Promise<{ batchId: string; state: 'open' }>;
  /** `fairnessKeys`: each item's own key, one per item of the part; null: the batch's. */
  append(
    batchId: string,
    part: number,
    items: unknown[],
    fairnessKeys?: (string | null)[],
  ): Promise<{ total: number; replayed: boolean }>;
  commit(batchId: string): Promise<BatchCreated>;
}

export function approvalsApi(http: Transport): Approvals {
  return { list: (query = {}) => http.request('GET', '/v1/approvals', { query }) };
}

export function agentsApi(http: Transport): Agents {
  return {
    list: () => http.request('GET', '/v1/agents'),
    get: (name) => http.request('GET', `/v1/agents/${enc(name)}`),
  };
}

export function eventsApi(http: Transport): Events {
  return {
    async send(event, opts = {}) {
      const body = JSON.stringify(event);
      // An event names itself (source and id): sending it again is the same event, never a second one.
      if (!opts.signed) return http.request('POST', '/v1/events', { body: event, repeatable: true });
      const { secret, tenant } = opts.signed;
      const signature = await signBody(secret, body, Math.floor(Date.now() / 1000));
      return http.request('POST', '/v1/events', {
        raw: { body, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature } },
        query: { tenant },
        anonymous: true,
        repeatable: true,
      });
    },
    list: (query = {}) => http.request('GET', '/v1/events', { query }),
    get: (eventId, opts = {}) => http.request('GET', `/v1/events/${enc(eventId)}`, { query: opts }),
    replay: (eventId, opts = {}) =>
      http.request('POST', `/v1/events/${enc(eventId)}/replay`, { query: opts, body: {} }),
  };
}

export function triggersApi(http: Transport): Triggers {
  return {
    put: (name, spec) =>
      http.request('PUT', `/v1/triggers/${enc(name)}`, {
        body: { ...spec, agent: nameOf(spec.agent) },
        repeatable: true,
      }),
    list: () => http.request('GET', '/v1/triggers'),
    get: (name) => http.request('GET', `/v1/triggers/${enc(name)}`),
    delete: (name) => http.request('DELETE', `/v1/triggers/${enc(name)}`),
  };
}

export function webhookSecretsApi(http: Transport): WebhookSecrets {
  return {
    create: (source) => http.request('POST', '/v1/webhook-secrets', { body: { source } }),
    list: () => http.request('GET', '/v1/webhook-secrets'),
    delete: (source) => http.request('DELETE', '/v1/webhook-secrets', { query: { source } }),
  };
}

export function batchesApi(http: Transport): Batches {
  const path = (batchId: string, suffix = '') => `/v1/batches/${enc(batchId)}${suffix}`;
  return {
    create: (agent, items, opts = {}) =>
      http.request('POST', '/v1/batches', { body: { agent: nameOf(agent), items, ...opts } }),
    get: (batchId) => http.request('GET', path(batchId)),
    resume: (batchId) => http.request('POST', path(batchId, '/resume'), { body: {} }),
    open: (agent, opts = {}) =>
      http.request('POST', '/v1/batches/open', { body: { agent: nameOf(agent), ...opts } }),
    // A part is appended once: sending the same part again is answered as a replay.
    append: (batchId, part, items, fairnessKeys) =>
      http.request('POST', path(batchId, '/items'), {
        body: { part, items, ...(fairnessKeys ? { fairnessKeys } : {}) },
        repeatable: true,
      }),
    commit: (batchId) => http.request('POST', path(batchId, '/commit'), { body: {}, repeatable: true }),
  };
}
