/**
 * Colour for `keel chat` and `keel threads`: on a terminal only, never when piped, and never
 * when `NO_COLOR` is set to anything (https://no-color.org) or the terminal is `dumb`. The
 * escape codes are Node's own (`util.styleText`); deciding when to use them is ours.
 */
import { styleText } from 'node:util';

type Paint = (text: string) => string;

export interface Style {
  /** Whether this style writes escape codes at all. */
  readonly enabled: boolean;
  /** The user's own words and prompts. */
  you: Paint;
  /** What the assistant says. */
  keel: Paint;
  /** A tool call's command. */
  tool: Paint;
  /** Tool output, notes, costs: what is worth reading second. */
  dim: Paint;
  /** Failures. */
  error: Paint;
  /** A stopped answer, warnings. */
  warn: Paint;
}

const plain: Paint = (text) => text;

/** The style for output written to `stream`, as the environment `env` allows. */
export function styleFor(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>>,
): Style {
  const enabled =
    stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb';
  const paint =
    (format: Parameters<typeof styleText>[0]): Paint =>
    (text) =>
      enabled && text !== '' ? styleText(format, text) : text;
  return {
    enabled,
    you: paint('bold'),
    keel: enabled ? paint('cyan') : plain,
    tool: paint('magenta'),
    dim: paint('dim'),
    error: paint('red'),
    warn: paint('yellow'),
  };
}
