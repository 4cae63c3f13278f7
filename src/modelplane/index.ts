export { createSimulator } from './app';
export { startSimulator } from './server';
export type { RunningSimulator } from './server';
export { SimulatorState } from './state';
export type { SimulatorOptions, SimulatorStats } from './state';
export type { LatencyModel } from './latency';
export { formatDuration, parseDuration, parseRateLimitHeaders } from './rate-limit-headers';
export type { ParsedRateLimit, RateLimitSnapshot } from './rate-limit-headers';
export { estimatePromptTokens, estimateTextTokens } from './tokens';
