/**
 * The ids a stream's events carry (decision 0340), shared by the API that writes them and the
 * clients that resume from them:
 *
 * - `N`: the log event at offset N;
 * - `N_a_c`: the log event at offset N, written while a model call's text was under way, after
 *   the client had `c` characters of its attempt `a`;
 * - `N:a:c`: a piece of live text after log event N, `c` the attempt's characters through it;
 * - any of these and `-k`: the k-th of the events one translated into, before the last; after a
 *   live piece's id, `-k.s`, `s` the characters before the piece (its translation needs them).
 */

export interface StreamPosition {
  offset: number;
  /** Of the model call under way: the attempt and characters the client had. */
  live?: { attempt: number; chars: number; piece: boolean };
  within?: number;
  /** With `within` on a live piece: where the piece began. */
  start?: number;
}

/**
 * Every id a stream sends, exactly: what `parseStreamId` takes, as a regular expression without
 * back-references or `\d` (it is the OpenAPI document's `pattern` too, which fuzzers in other
 * languages read, where `\d` takes any Unicode digit).
 */
export const streamIdSource =
  '[0-9]{1,15}(?:(?:_[0-9]{1,6}_[0-9]{1,12})?(?:-[0-9]{1,6})?|:[0-9]{1,6}:[0-9]{1,12}(?:-[0-9]{1,6}(?:\\.[0-9]{1,12})?)?)';

/** The ids of Keel's native events, one event per log event or live piece (no `-k`). */
export const nativeStreamIdSource = '[0-9]{1,15}(?:_[0-9]{1,6}_[0-9]{1,12}|:[0-9]{1,6}:[0-9]{1,12})?';

const parts = /^([0-9]{1,15})(?:(:|_)([0-9]{1,6})\2([0-9]{1,12}))?(?:-([0-9]{1,6})(?:\.([0-9]{1,12}))?)?$/;

/** Parses an id a stream sent (one `streamIdSource` matches); undefined for anything else. */
export function parseStreamId(raw: string): StreamPosition | undefined {
  const match = parts.exec(raw);
  if (match === null) return undefined;
  const [, offset, separator, attempt, chars, within, start] = match;
  if (start !== undefined && separator !== ':') return undefined;
  return {
    offset: Number(offset),
    ...(separator === undefined
      ? {}
      : { live: { attempt: Number(attempt), chars: Number(chars), piece: separator === ':' } }),
    ...(within === undefined ? {} : { within: Number(within) }),
    ...(start === undefined ? {} : { start: Number(start) }),
  };
}

/** Negative when `a` came before `b` in one stream, positive after, 0 for the same event. */
export function compareStreamPositions(a: StreamPosition, b: StreamPosition): number {
  const key = (position: StreamPosition) => [
    position.offset,
    position.live?.attempt ?? 0,
    position.live?.chars ?? 0,
    position.within ?? Number.POSITIVE_INFINITY,
  ];
  const [left, right] = [key(a), key(b)];
  for (let index = 0; index < left.length; index++) {
    const difference = left[index]! - right[index]!;
    if (difference !== 0 && !Number.isNaN(difference)) return difference;
  }
  return 0;
}
