/** What the workflow must know about a tool to schedule it safely. */
export interface ToolFlags {
  /** Changes the world (files, processes, remote state): one attempt, never re-run after a crash. */
  sideEffects: boolean;
  /** Needs human approval when the thread's approval policy is `require`. */
  sensitive: boolean;
}

/** A tool as the model is told about it. */
export interface ToolSchema {
  name: string;
  description: string;
  input_schema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
}

export interface ToolDescriptor extends ToolSchema, ToolFlags {
  /** Where the tool runs: built into the worker, or an extension server's name. */
  source: string;
}

/** Returned by a tool activity: text for the model and whether it reports a failure. */
export interface ToolOutcome {
  content: string;
  is_error: boolean;
}

/**
 * What a stored payload too large to read back decodes to (codec/zlib-codec.ts): shaped as a
 * tool result, since only a tool's output ever grew so (before results were cut where they are
 * made, a 300 MB read compressed under Temporal's limit and no worker would inflate it again).
 * Decoding is a pure function of the stored bytes, so every replay reads the same placeholder.
 */
export interface DroppedPayload extends ToolOutcome {
  keel_dropped_payload: { compressed_bytes: number; limit_bytes: number };
}

/** The tool result a dropped payload stands for: an error saying the output was too large. */
export function droppedResultOf(value: unknown): ToolOutcome | undefined {
  if (typeof value !== 'object' || value === null || !('keel_dropped_payload' in value)) return undefined;
  const { content } = value as DroppedPayload;
  return { is_error: true, content };
}
