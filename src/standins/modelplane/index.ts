export { createSimulator } from './app';
export { startSimulator } from './server';
export type { RunningSimulator } from './server';
export { SimulatorState } from './state';
export type { SimulatorOptions, SimulatorStats } from './state';
export type { LatencyModel } from './latency';
export {
  formatDuration,
  parseDuration,
  parseRateLimitHeaders,
} from '../../activities/provider/rate-limit-headers';
export type { ParsedRateLimit, RateLimitSnapshot } from '../../activities/provider/rate-limit-headers';
export { estimatePromptTokens, estimateTextTokens } from '../../activities/provider/tokens';
export { CALL_KEY_HEADER } from '../../activities/provider/call-key';
export { RetryTracker } from './retry-tracker';
