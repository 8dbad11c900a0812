/** Numbers as a person reads them. */
import type { Usage } from './run-activity';

export const dollars = (value: number): string =>
  value === 0 ? '$0' : value < 0.01 ? `$${Number(value.toFixed(4))}` : `$${value.toFixed(2)}`;

export const tokens = (usage: Usage): string =>
  `${(usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0)).toLocaleString('en')} in · ${usage.output_tokens.toLocaleString('en')} out`;

/** `m:ss` left until `until`, or "0:00". */
export function remaining(until: string, now: number): string {
  const seconds = Math.max(0, Math.ceil((Date.parse(until) - now) / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}
