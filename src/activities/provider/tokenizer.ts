import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import type { ModelDialect, ModelRequest } from '../../contract/chat-model';

/**
 * Prompt tokens counted with a real tokenizer (tiktoken's `o200k_base`, the GPT-4o family's, from
 * the installed ranks file: no network), shared by the model client's reservation and the
 * simulator's usage, so the two cannot drift. Loading the ranks takes about a second of CPU and
 * megabytes of memory: this never runs in the workflow sandbox (the reservation is measured by an
 * activity, `measureModelCall`).
 */

let encoder: Tiktoken | undefined;
const tiktoken = (): Tiktoken => (encoder ??= new Tiktoken(o200kBase));

/**
 * Counts of long texts seen lately: a conversation grows by appending, and each call of it (and its
 * measurement before) counts again only what is new. Bounded by entries and by characters held.
 */
const cache = new Map<string, number>();
const CACHE_MIN_CHARS = 256;
const CACHE_MAX_ENTRIES = 8192;
const CACHE_MAX_CHARS = 64 * 1024 * 1024;
let cachedChars = 0;

/** Tokens of `text` in `o200k_base`. Special-token text (`<|endoftext|>`) counts as plain text. */
export function countTextTokens(text: string): number {
  if (text === '') return 0;
  if (text.length < CACHE_MIN_CHARS) return tiktoken().encode(text, [], []).length;
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const n = tiktoken().encode(text, [], []).length;
  cache.set(text, n);
  cachedChars += text.length;
  for (const [k] of cache) {
    if (cache.size <= CACHE_MAX_ENTRIES && cachedChars <= CACHE_MAX_CHARS) break;
    cache.delete(k);
    cachedChars -= k.length;
  }
  return n;
}

/** Per message: its start, role and end markers (OpenAI's chat format: 3 tokens, plus the role). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Once per request: the assistant reply's priming (`<|start|>assistant<|message|>`). */
export const REPLY_PRIMING_TOKENS = 3;
/** Per tool offered: the framing of its definition around its JSON (name, description, parameters). */
export const TOOL_OVERHEAD_TOKENS = 8;

/**
 * Anthropic's tokenizer is not public: Claude's count of the same text is bounded here by
 * `ANTHROPIC_TOKEN_FACTOR` times `o200k_base`'s (Claude counts English prose at roughly 1.1 to 1.3
 * times tiktoken's; 1.35 leaves a margin over that), rounded up. A prompt that breaks the bound
 * (non-Latin scripts, random strings) is charged what Anthropic bills, above its reservation.
 */
export const ANTHROPIC_TOKEN_FACTOR = 1.35;
/**
 * With tools, Anthropic adds a tool-use system prompt of its own (documented at 313 to 346 tokens
 * for the Claude 3 and 4 models); this bounds it.
 */
export const ANTHROPIC_TOOL_PROMPT_TOKENS = 400;

/**
 * The prompt of a request in `o200k_base` tokens: every message's content, tool calls (name and
 * arguments as JSON) and tool-call id, each message's overhead, the reply priming, and each tool's
 * definition as JSON. This is what the simulator bills as input, in both dialects.
 */
export function countPromptTokens(req: Pick<ModelRequest, 'messages' | 'tools'>): number {
  let n = REPLY_PRIMING_TOKENS;
  for (const m of req.messages) {
    n += MESSAGE_OVERHEAD_TOKENS + countTextTokens(m.content);
    if (m.role === 'assistant')
      for (const c of m.toolCalls ?? [])
        n += countTextTokens(c.id) + countTextTokens(c.name) + countTextTokens(JSON.stringify(c.arguments));
    if (m.role === 'tool') n += countTextTokens(m.toolCallId);
  }
  for (const t of req.tools ?? [])
    n +=
      TOOL_OVERHEAD_TOKENS +
      countTextTokens(JSON.stringify({ name: t.name, description: t.description, parameters: t.parameters }));
  return n;
}

/** The input a provider of `dialect` may bill for the request's prompt, at most. */
export function promptBound(req: Pick<ModelRequest, 'messages' | 'tools'>, dialect: ModelDialect): number {
  const counted = countPromptTokens(req);
  if (dialect === 'openai') return counted;
  const tools = req.tools?.length ? ANTHROPIC_TOOL_PROMPT_TOKENS : 0;
  return Math.ceil(counted * ANTHROPIC_TOKEN_FACTOR) + tools;
}

/**
 * The most a call can be billed: its prompt's bound plus `maxTokens` (the completion is capped in
 * the provider's own tokens, so that part is exact). A call reserves this before it goes.
 */
export function worstCaseTokens(req: ModelRequest, dialect: ModelDialect): number {
  return promptBound(req, dialect) + Math.max(1, Math.ceil(req.maxTokens));
}
