import { estimateTextTokens } from '../../contract/model-call';

/**
 * Token estimation shared by the simulator and the client: the providers' rule of thumb of about four
 * characters per token, rounded up (the rule lives in the contract: the run workflow reserves by it).
 */
export { estimateTextTokens };

/** A chat message's content: a string, a list of parts (only text parts count), or null. */
export type MessageContent = string | null | ReadonlyArray<{ type: string; text?: string | undefined }>;

/** Prompt tokens of a chat request: its message text at four characters per token. */
export function estimatePromptTokens(
  messages: ReadonlyArray<{ content?: MessageContent | undefined }>,
): number {
  const text = messages
    .map((m) => {
      if (typeof m.content === 'string') return m.content;
      if (Array.isArray(m.content)) return m.content.map((p) => p.text ?? '').join('');
      return '';
    })
    .join('');
  return estimateTextTokens(text);
}
