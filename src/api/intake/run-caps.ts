import { ApiError, type FieldIssue } from '../../contract/errors';
import type { RunCaps } from '../../config';
import { capDetails } from './validation';

/** How long a run plans to take by its own input, when the input says (the synthetic agent's steps × stepMs). */
function plannedWallMs(input: unknown): number {
  if (typeof input !== 'object' || input === null) return 0;
  const { steps, stepMs } = input as { steps?: unknown; stepMs?: unknown };
  return typeof steps === 'number' && typeof stepMs === 'number' ? steps * stepMs : 0;
}

/** The issues of one run against the per-run caps, under `prefix` (e.g. `items.3`). */
export function runCapIssues(
  caps: RunCaps,
  input: unknown,
  estimatedTokens: number,
  prefix: string,
  tokensField: string,
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (estimatedTokens > caps.maxTokens) {
    issues.push({
      path: tokensField,
      message: `A run may use at most ${caps.maxTokens} tokens (RUN_MAX_TOKENS); this one would need ${estimatedTokens}.`,
    });
  }
  const wallMs = plannedWallMs(input);
  if (wallMs > caps.maxWallSeconds * 1000) {
    issues.push({
      path: prefix,
      message: `A run may last at most ${caps.maxWallSeconds} s (RUN_MAX_WALL_SECONDS); this one plans ${Math.ceil(wallMs / 1000)} s.`,
    });
  }
  return issues;
}

/** 400 invalid_request when any run is over a cap. */
export function enforceRunCaps(issues: FieldIssue[]): void {
  if (issues.length > 0) throw ApiError.invalid(capDetails(issues), 'The request is over a per-run cap.');
}
