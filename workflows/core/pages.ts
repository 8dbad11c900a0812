/**
 * Long reads in bounded pages. A thread's transcript may hold ~600,000 characters; a query that
 * answers it whole is one payload of that size, past the 512 KiB at which the Temporal server
 * warns. Readers ask for pages instead, and readers that keep what they read (the model activity,
 * the API) ask only for what was appended since, checking the revision that says their copy of
 * the front is still the transcript's front.
 */
import { FailureType } from '../../common/failures';
import type {
  ModelMessagesQuery,
  StepMessages,
  TranscriptPage,
  TranscriptPageQuery,
  TranscriptQuery,
} from '../../common/messages';
import { sequenceOf, type Message, type ModelMessage } from '../../common/transcript';
import { isCurrentModelStep } from './model-step';
import { transcriptRevision, type ThreadState } from './state';
import { modelMessages } from './transcript';

/** `items` from `from` on, as many as fit in `maxChars` of JSON (one at least), and whether more follow. */
function page<T>(items: readonly T[], from: number, maxChars: number): { items: T[]; more: boolean } {
  let chars = 0;
  let end = from;
  while (end < items.length) {
    const size = JSON.stringify(items[end]).length + 1;
    if (end > from && chars + size > maxChars) break;
    chars += size;
    end++;
  }
  return { items: items.slice(from, end), more: end < items.length };
}

/** The current step's model messages, whole or (with `from`/`maxChars`) one page of them. */
export function stepMessagesAnswer(
  state: ThreadState,
  range: { from?: number; max_chars?: number },
): StepMessages & { current: true } {
  const messages: ModelMessage[] = modelMessages(state);
  if (range.from === undefined && range.max_chars === undefined) return { current: true, messages };
  const from = Math.max(0, range.from ?? 0);
  const { items } = page(messages, from, range.max_chars ?? Number.POSITIVE_INFINITY);
  return { current: true, messages: items, total: messages.length, revision: transcriptRevision(state) };
}

/**
 * The `getStepMessages` answer: the messages of the step a model activity is calling for, or, when
 * that step is no longer the current one (a late retry), that it is not.
 */
export function stepMessages(state: ThreadState, query: ModelMessagesQuery): StepMessages {
  const { run_id: runId, step } = query;
  if (isCurrentModelStep(state, runId, step)) return stepMessagesAnswer(state, query);
  const type = FailureType.modelStepNotCurrent;
  return {
    current: false,
    type,
    message: `${type}: step ${step} of run ${runId} is not the current model step`,
  };
}

/** The older, unpaged `getTranscript`: the messages after `m<after>`, at most `limit` of them. */
export function transcriptAfter(state: ThreadState, { after, limit }: TranscriptQuery): Message[] {
  // By id, not position: after a fork the transcript's n-th message is not the n-th appended.
  const transcript = state.transcript;
  const found = transcript.findIndex((message) => (sequenceOf(message.id) ?? 0) > (after ?? 0));
  const start = found === -1 ? transcript.length : found;
  return transcript.slice(start, limit === undefined ? undefined : start + limit);
}

/** One page of the transcript after message `m<after>` (by id: after a fork the n-th message is not the n-th appended). */
export function transcriptPage(
  state: ThreadState,
  { after, max_chars }: TranscriptPageQuery,
): TranscriptPage {
  const transcript: readonly Message[] = state.transcript;
  // Ids grow along the transcript (a parent always comes before its children), so the scan from
  // the end stops at once for a reader that holds all but the newest messages.
  let start = transcript.length;
  while (start > 0 && (sequenceOf(transcript[start - 1]?.id ?? '') ?? 0) > (after ?? 0)) start--;
  const { items, more } = page(transcript, start, max_chars);
  return { messages: items, more, revision: transcriptRevision(state) };
}
