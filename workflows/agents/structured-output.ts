/**
 * Structured output: the caller's JSON Schema becomes an instruction in the agent's system
 * prompt, and the agent's answer is parsed and checked against it here, in the caller's
 * workflow (zod's JSON Schema reader is deterministic: no I/O, no clock).
 */
import { z } from 'zod';

export type OutputCheck<Output> = { ok: true; output: Output } | { ok: false; message: string };

/** Converts the schema, or says why it cannot be used. */
export function schemaFor(jsonSchema: Record<string, unknown>): z.ZodType | string {
  try {
    return z.fromJSONSchema(jsonSchema);
  } catch (error) {
    return `output_schema is not a JSON Schema Keel can check: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** What the agent is told about the answer's shape, appended to its system prompt. */
export function outputInstruction(jsonSchema: Record<string, unknown>): string {
  return (
    'End with your answer as one JSON value (in a ```json fenced block) that satisfies this JSON Schema:\n' +
    JSON.stringify(jsonSchema)
  );
}

/**
 * The JSON values an answer may hold, most likely first: fenced blocks (the last one first, since
 * the final answer comes last), then the whole text.
 */
function candidates(answer: string): string[] {
  const fenced = [...answer.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  return [...fenced.reverse(), answer];
}

/** The first candidate that parses and satisfies the schema, or why none does. */
export function checkOutput<Output>(answer: string | undefined, schema: z.ZodType): OutputCheck<Output> {
  if (answer === undefined || answer.trim() === '')
    return { ok: false, message: 'the agent gave no answer to check against output_schema' };
  let firstProblem: string | undefined;
  for (const text of candidates(answer)) {
    let value: unknown;
    try {
      value = JSON.parse(text.trim());
    } catch {
      continue;
    }
    const checked = schema.safeParse(value);
    if (checked.success) return { ok: true, output: checked.data as Output };
    firstProblem ??= z.prettifyError(checked.error);
  }
  return {
    ok: false,
    message:
      firstProblem === undefined
        ? 'the agent answered without JSON; output_schema asks for a JSON answer'
        : `the agent's JSON does not satisfy output_schema:\n${firstProblem}`,
  };
}
