import type { ModelCompletion, ModelRequest, ModelToolCall } from '../../activities/provider/chat-model';
import { countPromptTokens, countTextTokens } from '../../activities/provider/tokenizer';

/**
 * The simulator's answers to agents' model calls: a pure function of the request, so tests can
 * assert on the text, with usage counted by the same tokenizer the client reserves with.
 *
 * - **Tool calls.** When tools are offered and `toolChoice` is not `none`, and the last message is
 *   not a tool's answer, the model calls a tool if `toolChoice` names one (that tool), is `required`
 *   (the first tool), or the last user message says `use tool <name>` of an offered tool. The call's
 *   arguments are `{ "input": <the last user message> }`; its id is derived from the request.
 * - **Text.** Otherwise the reply is `Simulated reply <hash>:` and words picked by a hash of the
 *   request, at most `maxTokens` tokens (finish `length` when cut, else `stop`).
 * - **Usage.** Input is `countPromptTokens` of the request; output the tokens of the text (or of the
 *   tool call's name and arguments).
 */
export function simulateCompletion(req: ModelRequest, model: string): ModelCompletion {
  const hash = fnv1a(JSON.stringify([req.messages, req.tools ?? [], req.toolChoice ?? null]));
  const inputTokens = countPromptTokens(req);
  const done = (c: Omit<ModelCompletion, 'usage' | 'model'>, outputTokens: number): ModelCompletion => ({
    ...c,
    usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
    model,
  });

  const tool = chosenTool(req);
  if (tool !== undefined) {
    const call: ModelToolCall = {
      id: `call_${hash.toString(16).padStart(8, '0')}`,
      name: tool,
      arguments: { input: lastUserText(req) },
    };
    const out = countTextTokens(call.name) + countTextTokens(JSON.stringify(call.arguments));
    if (out <= req.maxTokens) return done({ text: '', toolCalls: [call], finishReason: 'tool_calls' }, out);
  }

  const wanted = 8 + (hash % 24);
  let text = `Simulated reply ${hash.toString(16).padStart(8, '0')}:`;
  let state = hash;
  for (let i = 0; i < wanted; i += 1) {
    state = Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) >>> 0;
    text += ` ${WORDS[state % WORDS.length]}`;
  }
  text += '.';
  let tokens = countTextTokens(text);
  let cut = false;
  while (tokens > req.maxTokens) {
    cut = true;
    const space = text.lastIndexOf(' ');
    text = space > 0 ? text.slice(0, space) : '';
    tokens = countTextTokens(text);
  }
  return done({ text, toolCalls: [], finishReason: cut ? 'length' : 'stop' }, tokens);
}

function chosenTool(req: ModelRequest): string | undefined {
  const tools = req.tools ?? [];
  const choice = req.toolChoice;
  if (tools.length === 0 || choice === 'none') return undefined;
  if (req.messages[req.messages.length - 1]?.role === 'tool') return undefined;
  if (typeof choice === 'object') return tools.some((t) => t.name === choice.name) ? choice.name : undefined;
  if (choice === 'required') return tools[0]?.name;
  const asked = /use tool ([A-Za-z0-9_.-]+)/.exec(lastUserText(req))?.[1];
  return tools.some((t) => t.name === asked) ? asked : undefined;
}

function lastUserText(req: ModelRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i -= 1) {
    const m = req.messages[i];
    if (m?.role === 'user') return m.content;
  }
  return '';
}

/** FNV-1a over the UTF-16 code units: stable across processes and versions. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const WORDS = [
  'fleet',
  'token',
  'budget',
  'lane',
  'queue',
  'model',
  'answer',
  'review',
  'draft',
  'signal',
  'worker',
  'tenant',
  'ledger',
  'window',
  'quota',
  'result',
] as const;
