/**
 * The scripted model: offline and deterministic, for the embedded default, demos and tests.
 * It reads tool lines in the latest user message (`run:`, `read:`, `write:`, `delete:`, `list:`,
 * `spawn:`, `remember:`, `recall:`, `forget:`, `tool:` and `think:`), streams its text token by token, and reports usage like a
 * real model. It never pretends to be one.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AssistantContent, ModelMessage, ToolResultBlock, ToolUseBlock } from '../../common/transcript';
import type { CountRequest, ModelClient, ModelReply, ModelRequest } from './client';

/** Milliseconds between streamed tokens, by scripted model name. */
const tokenDelays: Record<string, number> = { demo: 0, typewriter: 25 };

const resultQuoteChars = 2_000;

interface Plan {
  text: string;
  calls: Array<{ name: string; input: Record<string, unknown> }>;
  thinkSeconds: number;
}

/** One tool call per matching line; several lines ask for several calls at once. */
export function planFromText(text: string): Plan {
  const calls: Plan['calls'] = [];
  let thinkSeconds = 0;
  for (const line of text.split('\n')) {
    const match = /^\s*(run|read|write|delete|list|spawn|remember|recall|forget|tool|think):\s?(.*)$/.exec(
      line,
    );
    if (match === null) continue;
    const [, verb, rest = ''] = match;
    const argument = rest.trim();
    switch (verb) {
      case 'run':
        calls.push({ name: 'bash', input: { command: argument } });
        break;
      case 'read':
        calls.push({ name: 'read_file', input: { path: argument } });
        break;
      case 'write': {
        const separator = argument.indexOf(': ');
        const path = separator === -1 ? argument : argument.slice(0, separator);
        const content = separator === -1 ? '' : argument.slice(separator + 2);
        calls.push({ name: 'write_file', input: { path, content } });
        break;
      }
      case 'delete':
        calls.push({ name: 'delete_file', input: { path: argument } });
        break;
      case 'list':
        calls.push({ name: 'list_files', input: argument === '' ? {} : { path: argument } });
        break;
      case 'spawn':
        calls.push({ name: 'spawn_agent', input: { task: argument } });
        break;
      case 'remember':
        calls.push({ name: 'remember', input: { text: argument } });
        break;
      case 'recall':
        calls.push({ name: 'recall', input: argument === '' ? {} : { query: argument } });
        break;
      case 'forget':
        calls.push({ name: 'forget', input: { key: argument } });
        break;
      case 'tool': {
        const space = argument.indexOf(' ');
        const name = space === -1 ? argument : argument.slice(0, space);
        calls.push({ name, input: space === -1 ? {} : parseToolInput(argument.slice(space + 1)) });
        break;
      }
      case 'think':
        thinkSeconds = Math.max(0, Number.parseFloat(argument) || 0);
        break;
    }
  }
  const text_ =
    calls.length > 0
      ? `I'll use ${calls.length === 1 ? 'a tool' : `${calls.length} tools`} for that.`
      : `(Scripted model, offline — not a real model.) You said: “${quote(text, 500)}”. ` +
        'Write lines like "run: ls -la", "read: notes.md", "write: notes.md: hello", "delete: notes.md" or "think: 2" and I will use tools. ' +
        'Set ANTHROPIC_API_KEY to talk to Claude.';
  return { text: text_, calls, thinkSeconds };
}

/** A `tool:` line's JSON input; text that is not a JSON object is passed as `{raw}`. */
function parseToolInput(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : { raw: text };
  } catch {
    return { raw: text };
  }
}

function quote(text: string, max: number): string {
  const flat = text.trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** The answer after tool results: a short summary quoting each one. */
export function summarizeResults(results: ToolResultBlock[], uses: ToolUseBlock[]): string {
  const lines = results.map((result) => {
    const use = uses.find((candidate) => candidate.id === result.tool_use_id);
    const label = use === undefined ? result.tool_use_id : `${use.name} ${JSON.stringify(use.input)}`;
    const status = result.is_error === true ? 'failed' : 'returned';
    return `- ${label} ${status}:\n\n\`\`\`\n${quote(result.content, resultQuoteChars)}\n\`\`\``;
  });
  return `(Scripted model, offline.) Here is what the tools reported:\n\n${lines.join('\n\n')}`;
}

function toolUseId(messages: ModelMessage[], index: number, name: string, input: unknown): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([messages.length, index, name, input]))
    .digest('hex');
  return `toolu_scripted_${digest.slice(0, 20)}`;
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** What the scripted model reads, counted as it reports it. */
const promptOf = (request: CountRequest): string =>
  request.system + JSON.stringify(request.tools) + JSON.stringify(request.messages);

/**
 * An answer of at most `maxTokens`, as a real model's: cut where the limit falls, its tool calls
 * dropped (a cut-off call is never run), and said so by its stop reason.
 */
function withinMaxTokens(text: string, calls: Plan['calls'], maxTokens: number) {
  if (estimateTokens(text) + 20 * calls.length <= maxTokens) return { text, calls, cut: false };
  return { text: text.slice(0, maxTokens * 4), calls: [], cut: true };
}

export class ScriptedModel implements ModelClient {
  readonly reportsAnswerStart = true;

  countInputTokens(request: CountRequest): Promise<number> {
    return Promise.resolve(estimateTokens(promptOf(request)));
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    request.onAnswerStarted?.();
    const { messages, signal } = request;
    const last = messages.at(-1);
    const results =
      last?.role === 'user' ? last.content.filter((b): b is ToolResultBlock => b.type === 'tool_result') : [];
    let text: string;
    let calls: Plan['calls'] = [];
    if (results.length > 0) {
      const previous = messages.at(-2);
      const uses =
        previous?.role === 'assistant'
          ? previous.content.filter((b): b is ToolUseBlock => b.type === 'tool_use')
          : [];
      text = summarizeResults(results, uses);
    } else {
      const userText =
        last?.role === 'user' ? last.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') : '';
      const plan = planFromText(userText);
      if (plan.thinkSeconds > 0) await sleep(plan.thinkSeconds * 1000, undefined, { signal });
      text = plan.text;
      calls = plan.calls;
    }
    const answer = withinMaxTokens(text, calls, request.maxTokens);
    ({ text, calls } = answer);
    const delay = tokenDelays[request.model] ?? 0;
    for (const token of text.match(/\S+\s*|\s+/g) ?? []) {
      if (delay > 0) await sleep(delay, undefined, { signal });
      signal.throwIfAborted();
      request.onTextDelta?.(token);
    }
    const content: AssistantContent[] = [{ type: 'text', text }];
    for (const [index, call] of calls.entries()) {
      content.push({
        type: 'tool_use',
        id: toolUseId(messages, index, call.name, call.input),
        name: call.name,
        input: call.input,
      });
    }
    return {
      content,
      stop_reason: answer.cut ? 'max_tokens' : calls.length > 0 ? 'tool_use' : 'end_turn',
      usage: {
        input_tokens: estimateTokens(promptOf(request)),
        output_tokens: estimateTokens(text) + 20 * calls.length,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
      model: `scripted-${request.model}`,
    };
  }
}
