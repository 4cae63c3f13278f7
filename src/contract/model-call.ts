/**
 * The shape of one agent step's model call, shared by the model client (which sends it) and the run
 * workflow (which reserves for it before it goes): the prompt, and so the most the call can be billed.
 */

/** Tokens of a text at the providers' rule of thumb of about four characters per token, rounded up. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The prompt a step sends. */
export function stepPrompt(runId: string, step: number): string {
  return `Run ${runId}, step ${step}: continue.`;
}

/** The completion cap a step asks for: its tokens less the prompt's, at least 1. */
export function stepMaxTokens(tokens: number, promptTokens: number): number {
  return Math.max(1, tokens - promptTokens);
}

/**
 * The most a step's call can be billed: its completion cap plus its prompt. A step reserves this much
 * before it calls (`spent ≤ budget` holds for every call reserved first).
 */
export function stepWorstCase(runId: string, step: number, tokens: number): number {
  const prompt = estimateTextTokens(stepPrompt(runId, step));
  return stepMaxTokens(Math.max(1, Math.ceil(tokens)), prompt) + prompt;
}

/**
 * `ApplicationFailure` type of a call the provider refused for the key (401, 403): retryable, after
 * `nextRetryDelay`, the longest the key breaker waits between probes. The run waits out the refusal
 * instead of failing; its own limits (wall time, cancel) still end it.
 */
export const MODEL_KEY_REFUSED = 'ModelKeyRefused';
