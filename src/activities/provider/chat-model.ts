/** The model-call contract as the provider code (and so the simulator) sees it. */
export type {
  ModelCompletion,
  ModelDialect,
  ModelFinishReason,
  ModelMessage,
  ModelRequest,
  ModelTool,
  ModelToolCall,
  ModelToolChoice,
} from '../../contract/chat-model';
