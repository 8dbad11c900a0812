/** What every model provider implements: one streamed completion, in Keel's canonical form. */
import type { ToolSchema } from '../../common/tools';
import type { AssistantContent, ModelMessage, StopReason } from '../../common/transcript';

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface ModelRequest {
  /** The provider's model name (without the `provider:` prefix). */
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ToolSchema[];
  maxTokens: number;
  signal: AbortSignal;
  /** Called with each piece of text as it streams. */
  onTextDelta?: (text: string) => void;
}

export interface ModelReply {
  content: AssistantContent[];
  stop_reason: StopReason;
  usage: TokenUsage;
  model: string;
}

export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelReply>;
}
