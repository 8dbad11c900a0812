/**
 * Which event vocabulary a run stream speaks: LangGraph's stream modes (the default, `values`
 * when none is asked for, as LangGraph does), or Keel's native events (`stream_mode: "keel"`,
 * what the `keel` CLI asks for). See docs/decisions/0091-stream-modes.md.
 */
import { z } from 'zod';
import { ApiError } from '../errors';

export const protocolStreamModes = [
  'values',
  'messages-tuple',
  'messages',
  'updates',
  'custom',
  'checkpoints',
  'tasks',
  'debug',
  'events',
] as const;
export type ProtocolStreamMode = (typeof protocolStreamModes)[number];

/** One event of a run stream as the wire carries it: its SSE event name and its data. */
export interface ProtocolEvent {
  event: string;
  data: unknown;
}

/** Keel's own event names (`run.*`, `message.delta`, `tool.*` …), for the `keel` CLI. */
export const keelStreamMode = 'keel';

const modeAlternatives = `"(?:${protocolStreamModes.join('|')})"`;
/** JSON's whitespace only (`\s` takes more, such as a vertical tab, which `JSON.parse` refuses). */
const jsonSpace = '[ \\t\\n\\r]*';

/**
 * `stream_mode` in a query string, as LangGraph's SDKs send it: one mode, a JSON array of modes
 * (`["values","messages"]`), or the parameter repeated. What the schema takes `parseStreamMode`
 * takes, so the document promises nothing that is then refused.
 */
export const streamModeQueryParameter = z
  .union([
    z.enum([...protocolStreamModes, keelStreamMode]),
    z
      .string()
      .regex(
        new RegExp(
          `^\\[${jsonSpace}(?:${modeAlternatives}(?:${jsonSpace},${jsonSpace}${modeAlternatives})*|"${keelStreamMode}")?${jsonSpace}\\]$`,
        ),
      ),
    z.array(z.enum(protocolStreamModes)),
    // What LangGraph's Python SDK sends when no mode is asked (`stream_mode=None` in its query).
    z.literal(''),
  ])
  .optional()
  .describe(
    'A mode, a JSON array of modes, or the parameter repeated; empty or `[]` for none (default values)',
  );

/** LangGraph modes Keel does not speak yet: refused with 422 rather than silently dropped. */
const notYetSupported = new Set(['tools']);

export type StreamSelection = { native: true } | { native: false; modes: ReadonlySet<ProtocolStreamMode> };

const isProtocolMode = (mode: string): mode is ProtocolStreamMode =>
  (protocolStreamModes as readonly string[]).includes(mode);

/** A query value as the SDK sends it: `values`, a JSON array `["values","updates"]`, or repeated. */
function fromQuery(raw: unknown): unknown {
  if (Array.isArray(raw)) return raw.flatMap((value) => [fromQuery(value)].flat());
  if (typeof raw !== 'string' || !raw.startsWith('[')) return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/**
 * True when a query's `stream_mode` names no mode: absent, empty (what LangGraph's Python SDK
 * sends for none) or `[]`, as LangGraph's `parse_stream_mode_param` reads all three.
 */
export function namesNoStreamMode(raw: unknown): boolean {
  const value = fromQuery(raw);
  return value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

/** Parses `stream_mode` from a body (`where: 'body'`) or a query string; 422 for anything else. */
export function parseStreamMode(raw: unknown, where: 'body' | 'query'): StreamSelection {
  const value = where === 'query' ? fromQuery(raw) : raw;
  const requested = value === undefined || value === null ? [] : [value].flat();
  const invalid = (message: string, code = 'validation_error') =>
    new ApiError(422, code, `${where}.stream_mode: ${message}`, 'stream_mode');
  if (!requested.every((mode): mode is string => typeof mode === 'string'))
    throw invalid('must be a string or an array of strings');
  if (requested.includes(keelStreamMode)) {
    if (requested.some((mode) => mode !== keelStreamMode))
      throw invalid(`"${keelStreamMode}" (Keel's native events) cannot be combined with other modes`);
    return { native: true };
  }
  const modes = new Set<ProtocolStreamMode>();
  for (const mode of requested) {
    if (isProtocolMode(mode)) modes.add(mode);
    else if (notYetSupported.has(mode))
      throw invalid(
        `"${mode}" is not supported yet; use ${protocolStreamModes.join(', ')} or ${keelStreamMode}`,
        'unsupported_stream_mode',
      );
    else throw invalid(`unknown stream mode "${mode}"`);
  }
  if (modes.size === 0) modes.add('values');
  return { native: false, modes };
}

/** The selection as a list of mode names: what a run keeps (`Run.stream_mode`) and a query repeats. */
export const streamModeNames = (selection: StreamSelection): string[] =>
  selection.native ? [keelStreamMode] : [...selection.modes];

/**
 * What a run's join streams when it names no mode: the modes the run was created with, as
 * LangGraph's join does (it follows every mode the run streams); `values` for a run not created
 * by a stream, as LangGraph's runs default to.
 */
export const runStreamSelection = (run: { stream_mode?: readonly string[] }): StreamSelection =>
  parseStreamMode(run.stream_mode, 'body');

/** The query string that asks a stream for the same selection (for `Location`, the reconnect path). */
export function streamModeQuery(selection: StreamSelection): string {
  return `stream_mode=${encodeURIComponent(JSON.stringify(streamModeNames(selection)))}`;
}
