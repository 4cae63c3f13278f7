import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { thrownMessage } from '../contract/json-data';

/** The run was cancelled (by its owner, or while it waited): it ends `cancelled`, not failed. */
export class RunCancelled extends Error {}

/** A failure as the run's view reports it: a snake_case code, the message, the tokens it used. */
export function failureOf(err: unknown): { code: string; message: string; usedTokens: number } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0] as { usedTokens?: number } | undefined;
    const code = (cause.type ?? 'error').replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
    return { code, message: cause.message, usedTokens: details?.usedTokens ?? 0 };
  }
  return {
    code: 'error',
    message: thrownMessage(err, 'the agent threw a value that cannot be shown as text'),
    usedTokens: 0,
  };
}
