/**
 * Size limits that keep every Temporal payload well under its 2 MiB ceiling and the history
 * bounded. Each is the reason a number appears elsewhere.
 */
export const limits = {
  /** Characters of user input in one run. */
  maxInputChars: 100_000,
  /** Characters of one tool result kept in the transcript; the rest is cut with a note. */
  toolResultChars: 32_000,
  /** Characters a tool activity may return (the transcript cuts further). */
  toolOutputChars: 200_000,
  /** Characters of a run's final answer copied into the run record. */
  runOutputChars: 16_000,
  /** Estimated transcript characters above which the oldest turns are compacted away. */
  transcriptChars: 600_000,
  /** Characters of earlier branches (cut off by forks) kept; the oldest go first. */
  branchChars: 300_000,
  /** Earlier branches kept. */
  branchesKept: 50,
  /** Runs waiting behind the active one. */
  maxQueuedRuns: 50,
  /** Finished runs remembered per thread (older ones are dropped at continue-as-new). */
  runsKept: 200,
  /** Stream events kept across continue-as-new. */
  streamEventsKept: 2_000,
  /** Characters of a thread id or run id. */
  maxIdChars: 128,
} as const;

/** Thread and run ids: safe as file names and workflow ids. */
export const idPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Cuts `text` to `max` characters, saying how much was cut. */
export function truncateWithNote(text: string, max: number): string {
  if (text.length <= max) return text;
  const kept = text.slice(0, max);
  return `${kept}\n[… truncated by Keel: showing ${max} of ${text.length} characters]`;
}
