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
