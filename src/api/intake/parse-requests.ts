import type { Agent } from '../../agent/define';
import { estimateAt } from '../agents/catalog';
import type { AgentCatalog } from '../agents/catalog';
import { ApiError, type FieldIssue } from '../../contract/errors';
import {
  BatchOpenRequestSchema,
  BatchPartRequestSchema,
  BatchRequestSchema,
  IdempotencyKeySchema,
  RunRequestSchema,
  type BatchOpenRequest,
  type BatchRequest,
  type RunRequest,
} from './schemas';
import { capDetails, issuesToDetails } from './validation';

export interface ParsedRun {
  request: RunRequest;
  agent: Agent;
  /** The input with the agent's defaults applied. */
  input: unknown;
  estimatedTokens: number;
  idempotencyKey: string | undefined;
}

export interface ParsedBatch {
  request: BatchRequest;
  agent: Agent;
  items: unknown[];
  /** Each item's own estimate, by the agent. */
  estimates: number[];
  estimatedTokensPerItem: number;
}

/** The agent a request body names, when it names one. */
export function agentNamed(body: unknown): string | undefined {
  const name = typeof body === 'object' && body !== null ? (body as { agent?: unknown }).agent : undefined;
  return typeof name === 'string' ? name : undefined;
}

/** Validates one agent input, pushing its issues under `prefix`; returns the parsed input. */
export function parseInput(
  agent: Agent,
  input: unknown,
  prefix: PropertyKey[],
  issues: FieldIssue[],
): unknown {
  const result = agent.input.safeParse(input);
  if (result.success) return result.data;
  issues.push(...issuesToDetails(result.error.issues, prefix));
  return undefined;
}

/** 400 with every issue found, else 404 unknown_agent when the agent is the only problem. */
export function throwIfInvalid(
  issues: FieldIssue[],
  agentName: string | undefined,
  agent: Agent | undefined,
  agents: AgentCatalog,
): void {
  if (issues.length > 0) throw ApiError.invalid(capDetails(issues));
  if (!agent) throw unknownAgent(agentName ?? '', agents);
}

/**
 * The body's agent and its `input` parsed by the agent's schema; throws the 400 (every issue gathered
 * so far, these included) or the 404 `unknown_agent`.
 */
export function agentAndInput(
  body: unknown,
  agents: AgentCatalog,
  issues: FieldIssue[],
): { agent: Agent; input: unknown } {
  const agentName = agentNamed(body);
  const agent = agentName === undefined ? undefined : agents.get(agentName);
  const rawInput =
    typeof body === 'object' && body !== null ? (body as { input?: unknown }).input : undefined;
  const input = agent ? parseInput(agent, rawInput, ['input'], issues) : undefined;
  throwIfInvalid(issues, agentName, agent, agents);
  if (!agent) throw new Error('unreachable: throwIfInvalid() throws on every failure');
  return { agent, input };
}

/** 404 `unknown_agent`, naming the agents there are. */
export function unknownAgent(name: string, agents: AgentCatalog): ApiError {
  return new ApiError('unknown_agent', `There is no agent called "${name}".`, { known: agents.names() });
}

/** Parses `POST /v1/runs`: the envelope, the agent, its input, and the idempotency key (body or header). */
export function parseRunRequest(
  body: unknown,
  headerKey: string | undefined,
  agents: AgentCatalog,
): ParsedRun {
  const issues: FieldIssue[] = [];
  const envelope = RunRequestSchema.safeParse(body);
  if (!envelope.success) issues.push(...issuesToDetails(envelope.error.issues));
  if (headerKey !== undefined && !IdempotencyKeySchema.safeParse(headerKey).success) {
    issues.push({ path: 'Idempotency-Key', message: 'The Idempotency-Key header must be 1–255 characters.' });
  }
  const bodyKey = envelope.success ? envelope.data.idempotencyKey : undefined;
  if (headerKey !== undefined && bodyKey !== undefined && headerKey !== bodyKey) {
    issues.push({
      path: 'idempotencyKey',
      message: 'It differs from the Idempotency-Key header; send one key.',
    });
  }
  const { agent, input } = agentAndInput(body, agents, issues);
  if (!envelope.success) throw new Error('unreachable: agentAndInput() throws on every failure');
  return {
    request: envelope.data,
    agent,
    input,
    // The agent's own estimate is the floor: a client may raise the reservation, never lower it.
    estimatedTokens: Math.max(envelope.data.estimatedTokens ?? 0, estimateAt(agent, input, 'input')),
    idempotencyKey: headerKey ?? bodyKey,
  };
}

/** Each item validated by the agent's schema, its issues under `items.<i>`. */
const parseItems = (agent: Agent, items: unknown[], issues: FieldIssue[]): unknown[] =>
  items.map((item, i) => parseInput(agent, item, ['items', i], issues));

/** Per-item keys must come one per item: else an issue at `fairnessKeys`. */
function checkItemKeys(r: { items: unknown[]; fairnessKeys?: unknown[] | undefined }, issues: FieldIssue[]) {
  const keys = r.fairnessKeys;
  if (keys && keys.length !== r.items.length) {
    issues.push({
      path: 'fairnessKeys',
      message: `It needs one key (or null) per item: ${r.items.length}, not ${keys.length}.`,
    });
  }
}

/** Parses `POST /v1/batches`: every item is validated by the agent's schema (paths like `items.3.steps`). */
export function parseBatchRequest(body: unknown, agents: AgentCatalog): ParsedBatch {
  const issues: FieldIssue[] = [];
  const envelope = BatchRequestSchema.safeParse(body);
  if (!envelope.success) issues.push(...issuesToDetails(envelope.error.issues));
  if (envelope.success) checkItemKeys(envelope.data, issues);
  const agentName = agentNamed(body);
  const agent = agentName === undefined ? undefined : agents.get(agentName);
  const items = agent && envelope.success ? parseItems(agent, envelope.data.items, issues) : [];
  throwIfInvalid(issues, agentName, agent, agents);
  if (!envelope.success || !agent) throw new Error('unreachable: throwIfInvalid() throws on every failure');
  const estimates = items.map((item, i) => estimateAt(agent, item, `items.${i}`));
  // The fleet takes one figure per item: the mean, rounded up, so the batch reserves at least its sum.
  const mean = Math.ceil(estimates.reduce((a, b) => a + b, 0) / estimates.length);
  return {
    request: envelope.data,
    agent,
    items,
    estimates,
    // A floor as for a single run; each item is also reserved at least its own estimate when it starts.
    estimatedTokensPerItem: Math.max(envelope.data.estimatedTokensPerItem ?? 0, mean),
  };
}

/** Parses `POST /v1/batches/open`: the envelope and the agent. */
export function parseBatchOpen(
  body: unknown,
  agents: AgentCatalog,
): { request: BatchOpenRequest; agent: Agent } {
  const issues: FieldIssue[] = [];
  const envelope = BatchOpenRequestSchema.safeParse(body);
  if (!envelope.success) issues.push(...issuesToDetails(envelope.error.issues));
  const agentName = agentNamed(body);
  const agent = agentName === undefined ? undefined : agents.get(agentName);
  throwIfInvalid(issues, agentName, agent, agents);
  if (!envelope.success || !agent) throw new Error('unreachable: throwIfInvalid() throws on every failure');
  return { request: envelope.data, agent };
}

/** Parses `POST /v1/batches/:batchId/items`: the part number and each item, by the batch's agent. */
export function parseBatchPart(
  body: unknown,
  agent: Agent,
): { part: number; items: unknown[]; estimates: number[]; fairnessKeys?: (string | null)[] } {
  const issues: FieldIssue[] = [];
  const envelope = BatchPartRequestSchema.safeParse(body);
  if (!envelope.success) issues.push(...issuesToDetails(envelope.error.issues));
  else checkItemKeys(envelope.data, issues);
  const items = envelope.success ? parseItems(agent, envelope.data.items, issues) : [];
  if (issues.length > 0 || !envelope.success) throw ApiError.invalid(capDetails(issues));
  const keys = envelope.data.fairnessKeys;
  return {
    part: envelope.data.part,
    items,
    estimates: items.map((item, i) => estimateAt(agent, item, `items.${i}`)),
    // Stored only when some item names a key (a list of nulls says nothing the batch's key does not).
    ...(keys?.some((k) => k !== null) ? { fairnessKeys: keys } : {}),
  };
}
