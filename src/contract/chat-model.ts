/**
 * The model-call contract: what an agent asks a model (`ctx.model(...)`) and what it gets back, in
 * one shape for every provider dialect (the model client maps it to OpenAI chat completions or
 * Anthropic Messages). Pure data: the workflow bundle loads it.
 */

/** A tool call the model asked for; `arguments` is the parsed JSON object the model produced. */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** One message of a conversation. */
export type ModelMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ModelToolCall[] }
  /** A tool's answer to the assistant's call `toolCallId`. */
  | { role: 'tool'; content: string; toolCallId: string };

/** A tool the model may call: its name, what it does, and its arguments as a JSON Schema object. */
export interface ModelTool {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

/** `auto`: the model decides; `none`: no tool; `required`: some tool; `{ name }`: that tool. */
export type ModelToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** One model call. */
export interface ModelRequest {
  messages: ModelMessage[];
  /** A model named in the worker's `MODELS`; absent: its default model. */
  model?: string;
  /** The most completion tokens the call may produce (and is reserved for). */
  maxTokens: number;
  temperature?: number;
  tools?: ModelTool[];
  toolChoice?: ModelToolChoice;
}

/**
 * Why the model stopped: `stop` (done), `length` (hit `maxTokens`), `tool_calls` (wants tools run),
 * `content_filter` (refused), `other` (a reason this contract does not name).
 */
export type ModelFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'other';

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** The model's answer. */
export interface ModelCompletion {
  text: string;
  toolCalls: ModelToolCall[];
  finishReason: ModelFinishReason;
  /** What the provider billed (the ledger charges `totalTokens`). */
  usage: ModelUsage;
  /** The model that answered, as the provider names it. */
  model: string;
}

/** The provider dialects the model client speaks. */
export type ModelDialect = 'openai' | 'anthropic';
