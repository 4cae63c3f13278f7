export * from './define';
export type {
  ModelCompletion,
  ModelFinishReason,
  ModelMessage,
  ModelRequest,
  ModelTool,
  ModelToolCall,
  ModelToolChoice,
  ModelUsage,
} from '../contract/chat-model';
