/**
 * `keel chat`'s local commands: a line that starts with `/` and a word is for the chat itself and
 * never reaches the model (an unknown one is refused, not sent). `//…` sends a line that starts
 * with `/`.
 */

export const chatCommands = {
  help: 'list these commands',
  history: 'print the thread so far',
  status: "the thread's status, model, approval mode and spend",
  approve: "approve the thread's pending approvals (or one: /approve <id>)",
  deny: "deny the thread's pending approvals (or one: /deny <id> [reason])",
  exit: 'leave the chat (also /quit, or Ctrl-D; Ctrl-C stops a run, twice leaves)',
} as const;
export type ChatCommandName = keyof typeof chatCommands;

export type ChatLine =
  | { kind: 'message'; text: string }
  | { kind: 'command'; name: ChatCommandName; args: string[] }
  | { kind: 'unknown'; name: string };

const aliases: Record<string, ChatCommandName> = { quit: 'exit', '?': 'help' };

/** What a line typed at `you ›` is: a message for the model, or a command for the chat. */
export function parseChatLine(line: string): ChatLine {
  const trimmed = line.trim();
  if (trimmed.startsWith('//')) return { kind: 'message', text: line.replace(/^(\s*)\//, '$1') };
  const match = /^\/([A-Za-z?][\w-]*)(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (match === null) return { kind: 'message', text: line };
  const word = match[1]!.toLowerCase();
  const name = word in chatCommands ? (word as ChatCommandName) : aliases[word];
  if (name === undefined) return { kind: 'unknown', name: word };
  const args = (match[2] ?? '').split(/\s+/).filter((arg) => arg !== '');
  return { kind: 'command', name, args };
}

/** `/help`'s text, one command a line. */
export function helpLines(): string[] {
  const width = Math.max(...Object.keys(chatCommands).map((name) => name.length)) + 2;
  return [
    'Commands (never sent to the model):',
    ...Object.entries(chatCommands).map(([name, what]) => `  /${name.padEnd(width)}${what}`),
    '  //text  sends a message that starts with /text',
    'A line ending in \\ continues the message on the next line.',
  ];
}
