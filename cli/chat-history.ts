/**
 * The thread so far, as `keel chat` prints it when it resumes a thread (and for `/history`):
 * the same lines a live run shows, from the transcript.
 */
import type { Message, ToolResultBlock } from '../common/transcript';
import type { Style } from './style';
import { foldedOutput, toolCallLine } from './tool-lines';

/** At most this many messages are printed; the rest is one line pointing to the export. */
export const historyMessagesShown = 40;

/** Lines for a tool call and its result (when it has one). */
export function toolLines(
  style: Style,
  name: string,
  input: Record<string, unknown>,
  result?: Pick<ToolResultBlock, 'content' | 'is_error'>,
): string[] {
  const lines = [`  ⚙ ${style.tool(toolCallLine(name, input))}`];
  if (result !== undefined) lines.push(...resultLines(style, result.content, result.is_error === true));
  return lines;
}

/** A result's folded output under its call, marked when it failed. */
export function resultLines(style: Style, content: string, isError: boolean): string[] {
  const output = foldedOutput(content).map((line) => `    ${style.dim(`│ ${line}`)}`);
  return isError ? [`    ${style.error('✗ failed')}`, ...output] : output;
}

/** The mark under an answer the user stopped. */
export const stoppedLine = (style: Style) => `  ${style.warn('⏹ stopped')}`;

export function historyLines(style: Style, messages: readonly Message[], threadId: string): string[] {
  const shown = messages.slice(-historyMessagesShown);
  const lines: string[] = [];
  if (shown.length < messages.length)
    lines.push(
      style.dim(
        `… ${messages.length - shown.length} earlier messages (keel threads export ${threadId} shows them all)`,
      ),
    );
  const results = new Map<string, ToolResultBlock>();
  for (const message of shown)
    if (message.role === 'user')
      for (const block of message.content)
        if (block.type === 'tool_result') results.set(block.tool_use_id, block);
  for (const message of shown) {
    if (message.role === 'user') {
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
      if (text !== '') lines.push(`${style.you('you ›')} ${text}`);
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'text' && block.text !== '')
        lines.push(
          message.model === 'keel' ? style.dim(`  (${block.text})`) : `${style.keel('keel ›')} ${block.text}`,
        );
      if (block.type === 'tool_use')
        lines.push(...toolLines(style, block.name, block.input, results.get(block.id)));
    }
    if (message.stopped === true) lines.push(stoppedLine(style));
  }
  return lines;
}
