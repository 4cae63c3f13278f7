import type { BatchView, RunGateView, RunListItem, RunStatus, RunView } from '../contract/fleet-port';

/** The wire shapes of docs/api.md, as the client returns them. */

export type { RunStatus, RunListItem };
/** A run's lane: `interactive`, `standard` (the default) or `batch`. */
export type Priority = RunView['priority'];

/** A run's human gate, as `GET /v1/runs/:id` and `GET /v1/approvals` show it (RunView.gate). */
export type GateView = Partial<RunGateView>;

/** `GET /v1/runs/:id`, with the result typed by the agent. */
export type RunDetails<R = unknown> = Omit<RunView, 'result' | 'gate'> & {
  result: R | null;
  gate?: GateView;
};

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface RunListQuery {
  status?: RunStatus;
  priority?: Priority;
  limit?: number;
  cursor?: string;
  /** Admin token only: one tenant's runs. */
  tenant?: string;
}

export interface StartOptions {
  priority?: Priority;
  /**
   * Same key and same body again: the same run, never a second one. Default: a fresh key per
   * `start()` call, so the client's own retries never start a run twice.
   */
  idempotencyKey?: string;
  /** Reserve more than the agent's estimate (never less). */
  estimatedTokens?: number;
  /** Who the run is for inside the tenant (an end user): the tenant's turns are shared between its keys by tokens. */
  fairnessKey?: string;
}

/** `POST /v1/runs` and its replay. */
export interface StartAnswer {
  runId: string;
  status: RunStatus;
  links: { self: string };
}

/** A run waiting at its gate (`GET /v1/approvals`). */
export interface Approval {
  runId: string;
  tenant: string;
  agent: string;
  priority: Priority;
  createdAt: string;
  /** The waiting gate: send it with the decision (`approve({ gateId })`). Null from an older worker. */
  gateId: number | null;
  /** What is to be approved (the agent's `ctx.gate({ proposal })`); null when the run carries none. */
  proposal: unknown;
  openedAt: string | null;
  /** How long a human may take, what happens then, and when. */
  timeout: { seconds: number; onTimeout: 'approve' | 'reject' | 'escalate'; expiresAt: string | null } | null;
  links: { run: string; approve: string; reject: string };
}

/** An agent the API knows (`GET /v1/agents`). */
export interface AgentInfo {
  name: string;
  description: string | null;
  /** The input's JSON Schema (what a client sends, before defaults). */
  input: Record<string, unknown>;
  tools: string[];
  effects: string[];
  gate: { timeoutSeconds: number; onTimeout: 'approve' | 'reject' | 'escalate' } | null;
  /** One figure for every run, or a function of the input. */
  estimate: { kind: 'fixed'; tokens: number } | { kind: 'input' };
  /** Whether a worker polls the agent's task queue now (null: unknown). */
  served: boolean | null;
  links: { self: string };
}

export type BatchDetails = BatchView & { state?: 'open' | 'committed' | string };

export interface BatchCreated {
  batchId: string;
  total: number;
  links: { self: string };
}

export interface BatchOptions {
  priority?: Priority;
  estimatedTokensPerItem?: number;
}

/** `batches.open`'s options: the key of the batch's runs that no part names one for (see `RunOptions.fairnessKey`). */
export interface BatchOpenOptions extends BatchOptions {
  fairnessKey?: string;
}

/** `batches.create`'s options: a batch sent whole may carry fairness keys (see `RunOptions.fairnessKey`). */
export interface BatchCreateOptions extends BatchOptions {
  /** The key of the batch's runs: those `fairnessKeys` does not name. */
  fairnessKey?: string;
  /** Each item's own key, one per item in order; null: `fairnessKey`. */
  fairnessKeys?: (string | null)[];
}

/** A CloudEvents 1.0 event in structured JSON mode. */
export interface CloudEvent {
  id: string;
  type: string;
  source: string;
  time?: string;
  data?: unknown;
}

export interface EventRunView {
  trigger: string;
  runId: string;
  agent: string;
  priority: Priority;
  status: string;
  refusal?: { code: string; message: string; retryAfterSeconds: number };
  links: { run: string };
}

/** An event as the API recorded it, with the runs its triggers started. */
export interface EventView {
  eventId: string;
  type: string;
  source: string;
  receivedAt: string;
  outcome: 'no_match' | 'pending' | 'retrying' | 'started' | 'refused' | 'invalid_input';
  attempts: number;
  nextAttemptAt: string | null;
  replays: number;
  runs: EventRunView[];
  links: { self: string; replay: string };
}

export interface TriggerSpec {
  eventType: string;
  filter?: Record<string, string | number | boolean | null>;
  sources?: string[];
  agent: string;
  priority?: Priority;
  /** The run's input, with `{{ data.x }}` placeholders filled from the event. */
  input?: unknown;
  estimatedTokens?: number;
}

export type TriggerView = TriggerSpec & { name: string; [more: string]: unknown };
