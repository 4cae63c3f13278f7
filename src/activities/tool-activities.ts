import { createHash, createHmac } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { isJsonData } from '../contract/json-data';
import type { EffectStore } from '../stores/effects/effect-store';
import { deliverOnce } from './deliver-once';
import { isToolName, mayCall } from '../contract/tool-registry';
import type {
  BuiltInToolName,
  ToolActivities,
  ToolActivity,
  ToolName,
  ToolRequest,
  ToolResponse,
} from '../contract/tool-registry';

/**
 * A credential's public key id: which key acted (for rotation and audit), not the key. An HMAC under
 * the deployment's salt, so the id cannot be checked against a guessed credential without the salt,
 * nor matched across deployments.
 */
export function keyId(credential: string, salt: string): string {
  return createHmac('sha256', salt).update(credential).digest('hex').slice(0, 12);
}

/** The identity a tool acts as, as run views and the sink's ledger show it. */
export function identityOf(tool: ToolName, credential: string, salt: string): string {
  return `tool:${tool}#${keyId(credential, salt)}`;
}

export interface ToolDeps {
  /** Only the credentials of the tools this worker serves. */
  credentials: Partial<Record<ToolName, string>>;
  effects: EffectStore;
  /** Where the pager's effect lands; undefined: the effect store's row is the effect. */
  effectSinkUrl: string | undefined;
  /** The deployment's salt of tool identities (`toolIdentitySalt`). */
  identitySalt: string;
}

const str = (v: unknown, max = 2000): string => (typeof v === 'string' ? v.slice(0, max) : '');

/** A stable, fake-but-deterministic figure for a read (the tools stand in for real systems). */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** The most targets one scanner call reads (an audit item has at most 50). */
const SCAN_MAX_TARGETS = 50;

/** One target's finding; the target cut to an audit target's 500 characters (src/agents/catalog.ts). */
const scan = (raw: unknown) => {
  const target = str(raw, 500);
  return { target, finding: parseInt(digest(target), 16) % 7 === 0 ? 'issue' : 'clean' };
};

type Impl = (req: ToolRequest, credential: string) => Promise<Record<string, unknown>>;

const IMPLS: Record<BuiltInToolName, (deps: ToolDeps) => Impl> = {
  lookup: () => async (req) => ({
    incident: str(req.args.incident),
    record: `INC-${digest(str(req.args.incident))}`,
  }),
  // One target (`target`, runs begun before audit-scan-chunk-v1) or up to SCAN_MAX_TARGETS (`targets`).
  scanner: () => async (req) => {
    if (!Array.isArray(req.args.targets)) return scan(req.args.target);
    return { findings: req.args.targets.slice(0, SCAN_MAX_TARGETS).map(scan) };
  },
  pager: (deps) => async (req, credential) => {
    const state = await deps.effects.apply(req.key, { runId: req.runId, tool: 'pager' });
    if (deps.effectSinkUrl)
      await deliverOnce(deps.effects, deps.effectSinkUrl, req.key, state, { tool: 'pager', credential });
    return { paged: true, applied: state.applied };
  },
};

/**
 * The activities of a worker serving `tools`, and nothing else: a tool whose credential this worker
 * does not hold is not registered, so its task queue is never polled from here.
 */
export function createToolActivities(
  tools: readonly BuiltInToolName[],
  deps: ToolDeps,
): Partial<ToolActivities> {
  const acts: Partial<ToolActivities> = {};
  for (const tool of tools) {
    if (!isToolName(tool)) throw new Error(`"${tool}" is not a built-in tool`);
    const credential = deps.credentials[tool];
    if (!credential) throw new Error(`no credential for tool "${tool}"`);
    const impl = IMPLS[tool](deps);
    acts[tool] = async (req: ToolRequest): Promise<ToolResponse> => {
      // The workflow checked the declaration; the tool checks it again (a workflow is not trusted with it).
      if (req.tool !== tool || !mayCall(req.agent, tool))
        throw ApplicationFailure.create({
          type: 'ToolNotDeclared',
          message: `agent "${req.agent}" did not declare tool "${tool}"`,
          nonRetryable: true,
        });
      return { identity: identityOf(tool, credential, deps.identitySalt), data: await impl(req, credential) };
    };
  }
  return acts;
}

/** What a user's tool function is called with besides its arguments. */
export interface ToolCallContext {
  /** The tool's own credential (held by this worker only; never in any history). */
  credential: string;
  /** The identity the tool acts as (`tool:<name>#<key id>`), as the run's toolCalls show it. */
  identity: string;
  /** The call's idempotency key: the same on every retry of this call. */
  key: string;
  runId: string;
  agent: string;
}

/** A user's tool: its arguments in, a JSON object out. A thrown error is retried; an ApplicationFailure marked non-retryable fails the call. */
export type ToolHandler = (
  args: Record<string, unknown>,
  ctx: ToolCallContext,
) => Promise<Record<string, unknown>> | Record<string, unknown>;

/**
 * The one activity of a worker serving the user's tool `name` with `credential`. `agents`, when
 * given, are the only agents it answers (the workflow checked the agent's declaration already).
 */
export function createUserToolActivity(opts: {
  name: ToolName;
  credential: string;
  handler: ToolHandler;
  agents?: readonly string[];
  /** The deployment's salt of tool identities (`toolIdentitySalt`). */
  identitySalt: string;
}): Record<ToolName, ToolActivity> {
  const { name, credential, handler } = opts;
  const identity = identityOf(name, credential, opts.identitySalt);
  return {
    [name]: async (req: ToolRequest): Promise<ToolResponse> => {
      if (req.tool !== name || (opts.agents !== undefined && !opts.agents.includes(req.agent)))
        throw ApplicationFailure.create({
          type: 'ToolNotDeclared',
          message: `agent "${req.agent}" may not call tool "${name}"`,
          nonRetryable: true,
        });
      const data = await handler(req.args, {
        credential,
        identity,
        key: req.key,
        runId: req.runId,
        agent: req.agent,
      });
      if (typeof data !== 'object' || data === null || Array.isArray(data) || !isJsonData(data))
        throw ApplicationFailure.create({
          type: 'ToolResultInvalid',
          message: `tool "${name}" must return a JSON object (plain data: no BigInt or cycle)`,
          nonRetryable: true,
        });
      return { identity, data };
    },
  };
}
