/**
 * Fairway's Node entry (the package's "."): start workers for your own agents and tools, or a whole
 * stack. Agents modules import from `fairway/agent`, never from here (this pulls in Node and the
 * Temporal worker, which the workflow sandbox refuses).
 */
export { startWorker, startToolWorker } from './entry/start-worker';
export type {
  ConfigOption,
  StartToolWorkerOptions,
  StartWorkerOptions,
  ToolOption,
  WorkerHandle,
} from './entry/start-worker';
export type { EffectContext, EffectFunction } from './activities/agent-effects';
export type { ToolCallContext, ToolHandler } from './activities/tool-activities';
export { AgentModuleError } from './fleet/agent-bundle';
export { startStack } from './stack';
export type { Stack, StackParts } from './stack';
export { loadConfig } from './config';
export type { Config } from './config';
export { agentTaskQueue, defineAgent } from './agent';
export type {
  Agent,
  AgentContext,
  AgentInput,
  AgentResult,
  AgentSpec,
  GateDecision,
  GateOptions,
} from './agent';
export { createClient, FairwayError } from './client';
