/**
 * How `keel chat` shows a tool call: what it does in one line (`$ ls -la` for bash, the path for
 * the file tools), then the first lines of its output, folded when long.
 */

/** Output lines shown under a call; longer output shows the first of them and how many more. */
export const outputLinesShown = 6;
/** A longer line is cut (the terminal would wrap it over several). */
const lineChars = 160;

const cut = (text: string, chars: number) => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);
const stringOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** One line for a call: `$ command` for bash, `read_file notes.md` for the file tools. */
export function toolCallLine(name: string, input: Record<string, unknown>): string {
  const path = stringOf(input.path);
  const command = stringOf(input.command);
  if (name === 'bash' && command !== undefined) return cut(`$ ${command.replace(/\n/g, ' ⏎ ')}`, 200);
  if (name === 'write_file' && path !== undefined) {
    const content = stringOf(input.content);
    return `write_file ${path}${content === undefined ? '' : ` (${content.length} chars)`}`;
  }
  if (name === 'spawn_agent') {
    const task = stringOf(input.task) ?? '';
    return cut(`spawn_agent: ${task.replace(/\n/g, ' ')}`, 200);
  }
  if (path !== undefined && Object.keys(input).length <= 3) return `${name} ${path}`;
  return cut(`${name} ${JSON.stringify(input)}`, 200);
}

/** The output's first lines, each cut to a terminal's width, and a last line saying what was folded. */
export function foldedOutput(content: string, shown = outputLinesShown): string[] {
  const lines = content.replace(/\n+$/, '').split('\n');
  if (lines.length === 1 && lines[0] === '') return [];
  const kept = lines.length > shown ? lines.slice(0, shown - 1) : lines;
  const folded = lines.length - kept.length;
  return [
    ...kept.map((line) => cut(line, lineChars)),
    ...(folded > 0 ? [`… ${folded} more line${folded === 1 ? '' : 's'}`] : []),
  ];
}
