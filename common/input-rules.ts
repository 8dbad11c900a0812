/**
 * The rules a run's input must keep whatever the thread's state: checked by the API before
 * anything is sent, and again by the thread (other workflows signal it directly), whose update
 * validators turn a rejection into a failure of its type. Pure.
 */
import type { FailureType } from './failures';
import { idPattern, limits } from './limits';
import type { SubmitInput } from './messages';
import { parseModelSpec } from './model-spec';
import { textOf } from './transcript';

export interface Rejection {
  type: FailureType;
  message: string;
}

export const isValidRunId = (runId: string): boolean =>
  idPattern.test(runId) && runId.length <= limits.maxIdChars;

/** The first rule an input breaks, if any. */
export function checkInput(input: SubmitInput): Rejection | undefined {
  if (!isValidRunId(input.run_id)) {
    return { type: 'InvalidInput', message: `run_id "${input.run_id}" must match ${idPattern.source}` };
  }
  const text = textOf(input.content);
  // No content at all is a run that brings no message, as LangGraph takes `input: null` (decision
  // 0381); blank text is refused.
  if (
    input.content.some((block) => block.type !== 'text') ||
    (input.content.length > 0 && text.trim() === '')
  ) {
    return {
      type: 'InvalidInput',
      message: 'input.messages holds no text: send a message with at least one non-blank character',
    };
  }
  if (text.length > limits.maxInputChars) {
    return {
      type: 'InvalidInput',
      message: `input is ${text.length} characters; the limit is ${limits.maxInputChars}`,
    };
  }
  if (input.model !== undefined) {
    const spec = parseModelSpec(input.model);
    if (typeof spec === 'string') return { type: 'InvalidInput', message: spec };
  }
  return undefined;
}
