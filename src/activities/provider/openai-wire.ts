import type {
  ModelCompletion,
  ModelFinishReason,
  ModelMessage,
  ModelRequest,
  ModelToolCall,
  ModelToolChoice,
} from '../../contract/chat-model';

/**
 * OpenAI chat completions (`POST /v1/chat/completions`) in both directions: the model client writes
 * requests and reads completions, the simulator reads requests and writes completions.
 */

interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface OpenAiMessage {
  role: string;
  content: string | null;
  tool_calls?: OpenAiToolCall[];
  tool_call_id?: string;
}

/** The request body for `model` (the provider's name); `user` carries the tenant for the bill. */
export function openAiRequest(req: ModelRequest, model: string, tenant: string | undefined) {
  const messages: OpenAiMessage[] = req.messages.map((m) => {
    if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.toolCallId };
    if (m.role === 'assistant' && m.toolCalls?.length)
      return {
        role: 'assistant',
        content: m.content === '' ? null : m.content,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: JSON.stringify(c.arguments) },
        })),
      };
    return { role: m.role, content: m.content };
  });
  return {
    model,
    messages,
    max_tokens: req.maxTokens,
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.tools?.length
      ? {
          tools: req.tools.map((t) => ({
            type: 'function',
            function: {
              name: t.name,
              ...(t.description !== undefined ? { description: t.description } : {}),
              parameters: t.parameters,
            },
          })),
        }
      : {}),
    ...(req.toolChoice !== undefined ? { tool_choice: openAiToolChoice(req.toolChoice) } : {}),
    ...(tenant ? { user: tenant } : {}),
  };
}

function openAiToolChoice(c: ModelToolChoice) {
  return typeof c === 'string' ? c : { type: 'function', function: { name: c.name } };
}

const FINISH: Record<string, ModelFinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

/** Reads a 2xx body; throws when it is not a completion with usage (its outcome is then unknown). */
export function openAiCompletion(body: unknown): ModelCompletion {
  const b = body as {
    model?: unknown;
    choices?: { message?: { content?: unknown; tool_calls?: OpenAiToolCall[] }; finish_reason?: unknown }[];
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown };
  } | null;
  const u = b?.usage;
  if (!b || typeof u?.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number')
    throw new Error('the model plane answered a completion without usage');
  const choice = b.choices?.[0];
  const content = choice?.message?.content;
  return {
    text: typeof content === 'string' ? content : '',
    toolCalls: (choice?.message?.tool_calls ?? []).map((c) => ({
      id: c.id,
      name: c.function.name,
      arguments: parseArguments(c.function.arguments),
    })),
    finishReason: FINISH[String(choice?.finish_reason)] ?? 'other',
    usage: {
      inputTokens: u.prompt_tokens,
      outputTokens: u.completion_tokens,
      totalTokens:
        typeof u.total_tokens === 'number' ? u.total_tokens : u.prompt_tokens + u.completion_tokens,
    },
    model: typeof b.model === 'string' ? b.model : '',
  };
}

/** Tool-call arguments as the model wrote them; text that is not a JSON object is kept under `_raw`. */
export function parseArguments(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* kept raw below */
  }
  return { _raw: text };
}

type ContentPart = { type: string; text?: string | undefined };
const textOf = (c: string | null | undefined | readonly ContentPart[]): string =>
  typeof c === 'string' ? c : Array.isArray(c) ? c.map((p: ContentPart) => p.text ?? '').join('') : '';

/** The simulator's reading of a request body (already checked by its schema) as the contract's request. */
export function fromOpenAiRequest(
  body: {
    messages: readonly {
      role: string;
      content?: string | null | readonly ContentPart[] | undefined;
      tool_calls?: readonly OpenAiToolCall[] | undefined;
      tool_call_id?: string | undefined;
    }[];
    max_tokens?: number | undefined;
    max_completion_tokens?: number | undefined;
    tools?:
      | readonly { function: { name: string; description?: string | undefined; parameters?: unknown } }[]
      | undefined;
    tool_choice?: unknown;
  },
  defaultMaxTokens: number,
): ModelRequest {
  const messages: ModelMessage[] = body.messages.map((m): ModelMessage => {
    const content = textOf(m.content);
    if (m.role === 'tool') return { role: 'tool', content, toolCallId: m.tool_call_id ?? '' };
    if (m.role === 'assistant') {
      const calls: ModelToolCall[] = (m.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: parseArguments(c.function.arguments),
      }));
      return calls.length ? { role: 'assistant', content, toolCalls: calls } : { role: 'assistant', content };
    }
    return { role: m.role === 'system' || m.role === 'developer' ? 'system' : 'user', content };
  });
  const choice = body.tool_choice as string | { function?: { name?: string } } | undefined;
  const toolChoice: ModelToolChoice | undefined =
    typeof choice === 'string'
      ? (choice as ModelToolChoice)
      : choice?.function?.name
        ? { name: choice.function.name }
        : undefined;
  return {
    messages,
    maxTokens: body.max_tokens ?? body.max_completion_tokens ?? defaultMaxTokens,
    ...(body.tools?.length
      ? {
          tools: body.tools.map((t) => ({
            name: t.function.name,
            ...(t.function.description !== undefined ? { description: t.function.description } : {}),
            parameters: (t.function.parameters ?? {}) as Record<string, unknown>,
          })),
        }
      : {}),
    ...(toolChoice ? { toolChoice } : {}),
  };
}

/** The simulator's completion body. */
export function openAiResponse(c: ModelCompletion, id: string, created: number) {
  const finish = c.finishReason === 'other' ? 'stop' : c.finishReason;
  return {
    id,
    object: 'chat.completion',
    created,
    model: c.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: c.toolCalls.length && c.text === '' ? null : c.text,
          ...(c.toolCalls.length
            ? {
                tool_calls: c.toolCalls.map((t) => ({
                  id: t.id,
                  type: 'function',
                  function: { name: t.name, arguments: JSON.stringify(t.arguments) },
                })),
              }
            : {}),
        },
        finish_reason: finish,
      },
    ],
    usage: {
      prompt_tokens: c.usage.inputTokens,
      completion_tokens: c.usage.outputTokens,
      total_tokens: c.usage.totalTokens,
    },
  };
}
