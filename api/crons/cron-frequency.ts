/**
 * How often a schedule fires, read from the spec Temporal parsed (so every syntax it accepts is
 * judged alike: five to seven fields, `@every`, shorthands). A cron fires at most once a minute:
 * each firing starts a workflow and a run, and one a second would flood a thread and the fleet.
 */
import type { ScheduleSpecDescription } from '@temporalio/client';

/** The shortest period a cron may have. */
export const minimumCronPeriodMs = 60_000;

/** The seconds of a minute a calendar matches. */
function secondsMatched(ranges: ReadonlyArray<{ start: number; end: number; step: number }>): Set<number> {
  const seconds = new Set<number>();
  for (const { start, end, step } of ranges)
    for (let second = start; second <= Math.max(start, end); second += Math.max(1, step)) seconds.add(second);
  return seconds;
}

/** Why `spec` fires more often than once a minute, or undefined when it does not. */
export function tooFrequent(spec: ScheduleSpecDescription): string | undefined {
  for (const interval of spec.intervals ?? [])
    if (interval.every < minimumCronPeriodMs) return `it fires every ${interval.every / 1000} s`;
  for (const calendar of spec.calendars ?? []) {
    const seconds = secondsMatched(calendar.second);
    if (seconds.size > 1) return `it fires on ${seconds.size} seconds of a minute`;
  }
  return undefined;
}
