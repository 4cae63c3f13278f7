import { worstCaseTokens } from '../../src/activities/provider/tokenizer';
import type { ModelDialect, ModelRequest } from '../../src/contract/chat-model';
import type { CutCalls } from '../../src/standins/modelplane/state';

/** What a ctx.model call reserves: its worst case as the tokenizer counts it, in its model's dialect (MODELS' default). */
export function requestWorstCase(r: ModelRequest): number {
  const dialect: ModelDialect = r.model === 'sim-claude' ? 'anthropic' : 'openai';
  return worstCaseTokens(r, dialect);
}

/** Each run's calls' worst cases by call key (`<runId>:<step>`, steps from 1), the calls in order. */
export function worstCasesByKey(runIds: readonly string[], worst: readonly (readonly number[])[]) {
  return new Map<string, number>(
    runIds.flatMap((id, i) => worst[i]!.map((w, c) => [`${id}:${c + 1}`, w] as const)),
  );
}

/**
 * What the ledger owes beyond the provider's bill for the calls a crash cut (the simulator's `cut`:
 * billed, nobody read the answer): each is charged its worst case, not what it was billed. NaN for a
 * cut call whose worst case `worstOf` does not know.
 */
export function cutSurplus(
  cut: CutCalls | undefined,
  worstOf: (callKey: string) => number | undefined,
): number {
  return (cut?.keys ?? []).reduce((a, [key, billed]) => a + (worstOf(key) ?? NaN) - billed, 0);
}
