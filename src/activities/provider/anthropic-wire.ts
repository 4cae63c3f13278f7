import type {
  ModelCompletion,
  ModelFinishReason,
  ModelMessage,
  ModelRequest,
  ModelToolChoice,
} from '../../contract/chat-model';

/**
 * Anthropic Messages (`POST /v1/messages`) in both directions: the model client writes requests and
 * reads messages, the simulator reads requests and writes messages.
 */

/** The `anthropic-version` header the client sends. */
export const ANTHROPIC_VERSION = '2023-06-01';

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string };

interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

/**
 * The request body for `model`: system messages become `system`, tool answers `tool_result` blocks
 * of a user turn, and consecutive turns of one role are merged (the API wants them alternating).
 * `metadata.user_id` carries the tenant for the bill.
 */
export function anthropicRequest(req: ModelRequest, model: string, tenant: string | undefined) {
  const system = req.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const turns: AnthropicMessage[] = [];
  for (const m of req.messages) {
    if (m.role === 'system') continue;
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const blocks: Block[] =
      m.role === 'tool'
        ? [{ type: 'tool_result', tool_use_id: m.toolCallId, content: m.content }]
        : [
            ...(m.content !== '' || m.role === 'user' ? [{ type: 'text' as const, text: m.content }] : []),
            ...(m.role === 'assistant'
              ? (m.toolCalls ?? []).map((c) => ({
                  type: 'tool_use' as const,
                  id: c.id,
                  name: c.name,
                  input: c.arguments,
                }))
              : []),
          ];
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return {
    model,
    max_tokens: req.maxTokens,
    ...(system.length ? { system: system.join('\n\n') } : {}),
    messages: turns,
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.tools?.length
      ? {
          tools: req.tools.map((t) => ({
            name: t.name,
            ...(t.description !== undefined ? { description: t.description } : {}),
            input_schema: t.parameters,
          })),
        }
      : {}),
    ...(req.toolChoice !== undefined ? { tool_choice: anthropicToolChoice(req.toolChoice) } : {}),
    ...(tenant ? { metadata: { user_id: tenant } } : {}),
  };
}

function anthropicToolChoice(c: ModelToolChoice) {
  if (typeof c !== 'string') return { type: 'tool', name: c.name };
  return { type: c === 'required' ? 'any' : c };
}

const STOP: Record<string, ModelFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/**
 * Reads a 2xx body; throws when it has no usage (its outcome is then unknown). Cache writes and
 * reads are billed input too, so they count in `inputTokens`.
 */
export function anthropicCompletion(body: unknown): ModelCompletion {
  const b = body as {
    model?: unknown;
    content?: Block[];
    stop_reason?: unknown;
    usage?: Record<string, unknown>;
  } | null;
  const u = b?.usage;
  if (!b || typeof u?.input_tokens !== 'number' || typeof u.output_tokens !== 'number')
    throw new Error('the model plane answered a message without usage');
  const num = (v: unknown) => (typeof v === 'number' ? v : 0);
  const input = u.input_tokens + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens);
  const content = Array.isArray(b.content) ? b.content : [];
  return {
    text: content.map((c) => (c.type === 'text' ? c.text : '')).join(''),
    toolCalls: content.flatMap((c) =>
      c.type === 'tool_use' ? [{ id: c.id, name: c.name, arguments: c.input ?? {} }] : [],
    ),
    finishReason: STOP[String(b.stop_reason)] ?? 'other',
    usage: { inputTokens: input, outputTokens: u.output_tokens, totalTokens: input + u.output_tokens },
    model: typeof b.model === 'string' ? b.model : '',
  };
}

type WireBlock = {
  type: string;
  text?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
};

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const resultText = (v: unknown): string =>
  typeof v === 'string' ? v : Array.isArray(v) ? v.map((p: WireBlock) => str(p.text)).join('') : '';

/** The simulator's reading of a request body (already checked by its schema) as the contract's request. */
export function fromAnthropicRequest(body: {
  system?: string | readonly WireBlock[] | undefined;
  messages: readonly { role: string; content: string | readonly WireBlock[] }[];
  max_tokens: number;
  tools?: readonly { name: string; description?: string | undefined; input_schema?: unknown }[] | undefined;
  tool_choice?: { type: string; name?: string | undefined } | undefined;
}): ModelRequest {
  const messages: ModelMessage[] = [];
  const system = resultText(body.system);
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const m of body.messages) {
    const blocks: readonly WireBlock[] =
      typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (m.role === 'assistant') {
      const calls = blocks
        .filter((b) => b.type === 'tool_use')
        .map((b) => ({
          id: str(b.id),
          name: str(b.name),
          arguments: (b.input ?? {}) as Record<string, unknown>,
        }));
      const text = blocks.map((b) => (b.type === 'text' ? str(b.text) : '')).join('');
      messages.push(
        calls.length
          ? { role: 'assistant', content: text, toolCalls: calls }
          : { role: 'assistant', content: text },
      );
      continue;
    }
    for (const b of blocks) {
      if (b.type === 'tool_result')
        messages.push({ role: 'tool', content: resultText(b.content), toolCallId: str(b.tool_use_id) });
      else if (b.type === 'text') messages.push({ role: 'user', content: str(b.text) });
    }
  }
  const tc = body.tool_choice;
  const toolChoice: ModelToolChoice | undefined =
    tc === undefined
      ? undefined
      : tc.type === 'tool'
        ? { name: tc.name ?? '' }
        : tc.type === 'any'
          ? 'required'
          : tc.type === 'none'
            ? 'none'
            : 'auto';
  return {
    messages,
    maxTokens: body.max_tokens,
    ...(body.tools?.length
      ? {
          tools: body.tools.map((t) => ({
            name: t.name,
            ...(t.description !== undefined ? { description: t.description } : {}),
            parameters: (t.input_schema ?? {}) as Record<string, unknown>,
          })),
        }
      : {}),
    ...(toolChoice ? { toolChoice } : {}),
  };
}

const STOP_OUT: Record<ModelFinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
  other: 'end_turn',
};

/** The simulator's message body. */
export function anthropicResponse(c: ModelCompletion, id: string) {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: c.model,
    content: [
      ...(c.text !== '' || c.toolCalls.length === 0 ? [{ type: 'text', text: c.text }] : []),
      ...c.toolCalls.map((t) => ({ type: 'tool_use', id: t.id, name: t.name, input: t.arguments })),
    ],
    stop_reason: STOP_OUT[c.finishReason],
    stop_sequence: null,
    usage: { input_tokens: c.usage.inputTokens, output_tokens: c.usage.outputTokens },
  };
}

/** Anthropic's error body: `{ type: 'error', error: { type, message } }`. */
export function anthropicError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}
