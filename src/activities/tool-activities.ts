import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { EffectStore } from '../stores/effects/effect-store';
import { deliverOnce } from './deliver-once';
import { mayCall } from '../contract/tool-registry';
import type { ToolActivities, ToolName, ToolRequest, ToolResponse } from '../contract/tool-registry';

/** A credential's public key id: which key acted (for rotation and audit), not the key. */
export function keyId(credential: string): string {
  return createHash('sha256').update(credential).digest('hex').slice(0, 12);
}

/** The identity a tool acts as, as run views and the sink's ledger show it. */
export function identityOf(tool: ToolName, credential: string): string {
  return `tool:${tool}#${keyId(credential)}`;
}

export interface ToolDeps {
  /** Only the credentials of the tools this worker serves. */
  credentials: Partial<Record<ToolName, string>>;
  effects: EffectStore;
  /** Where the pager's effect lands; undefined: the effect store's row is the effect. */
  effectSinkUrl: string | undefined;
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

const IMPLS: Record<ToolName, (deps: ToolDeps) => Impl> = {
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
export function createToolActivities(tools: readonly ToolName[], deps: ToolDeps): Partial<ToolActivities> {
  const acts: Partial<ToolActivities> = {};
  for (const tool of tools) {
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
      return { identity: identityOf(tool, credential), data: await impl(req, credential) };
    };
  }
  return acts;
}
