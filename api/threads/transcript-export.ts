/** A thread's transcript as a document: JSON for programs, Markdown for people. */
import type { Thread } from '../../common/thread';
import type { Message } from '../../common/transcript';

export interface TranscriptExport {
  thread: Thread;
  messages: Message[];
  exported_at: string;
}

/** A fence longer than any backtick run inside, so tool output cannot close it early. */
function fenced(text: string, language = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

export function transcriptMarkdown({ thread, messages, exported_at }: TranscriptExport): string {
  const { summary } = thread;
  const lines = [
    `# Thread ${thread.thread_id}`,
    '',
    `- Status: ${thread.status}`,
    `- Model: ${thread.config.model}`,
    `- Created: ${thread.created_at}`,
    `- Runs: ${summary.runs}, model calls: ${summary.steps}, tokens: ${summary.tokens}, cost: $${summary.cost_usd.toFixed(4)}`,
    `- Exported: ${exported_at}`,
  ];
  for (const message of messages) {
    const results = message.content.every((block) => block.type === 'tool_result');
    const role = message.role === 'user' ? (results ? 'Tool results' : 'User') : 'Assistant';
    const stopped = message.role === 'assistant' && message.stopped === true ? ' (stopped)' : '';
    lines.push('', `## ${role}${stopped}`, '');
    for (const block of message.content) {
      if (block.type === 'text') lines.push(block.text, '');
      else if (block.type === 'tool_use')
        lines.push(
          `**Tool call** \`${block.name}\` (${block.id})`,
          '',
          fenced(JSON.stringify(block.input, null, 2), 'json'),
          '',
        );
      else
        lines.push(
          `**Result** for ${block.tool_use_id}${block.is_error === true ? ' (error)' : ''}`,
          '',
          fenced(block.content),
          '',
        );
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
