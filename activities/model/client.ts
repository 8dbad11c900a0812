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
  /**
   * Called when the provider accepted the request and began its answer: from then on the
   * attempt is billed, even if it fails (decision 0425).
   */
  onAnswerStarted?: () => void;
}

/** What a request's input is counted from. */
export type CountRequest = Pick<ModelRequest, 'model' | 'system' | 'messages' | 'tools' | 'signal'>;

export interface ModelReply {
  content: AssistantContent[];
  stop_reason: StopReason;
  usage: TokenUsage;
  model: string;
}

export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelReply>;
  /**
   * The request's input tokens as the provider counts them, when it can say before the call (a
   * model call under a budget reserves them, decision 0425). Without it, they are estimated.
   */
  countInputTokens?(request: CountRequest): Promise<number>;
  /** Whether `complete` calls `onAnswerStarted`; without it every failed attempt counts as billed. */
  readonly reportsAnswerStart?: boolean;
}
