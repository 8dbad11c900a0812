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

export const streamIdPattern = /^(\d{1,15})(?:(:|_)(\d{1,6})\2(\d{1,12}))?(?:-(\d{1,6})(?:\.(\d{1,12}))?)?$/;

/** Parses an id a stream sent; undefined for anything else. */
export function parseStreamId(raw: string): StreamPosition | undefined {
  const match = streamIdPattern.exec(raw);
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
