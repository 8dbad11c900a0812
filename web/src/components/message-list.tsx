/** The thread's messages: people's words, the model's answers, and each tool call as a card. */
import type { Message } from '@langchain/langgraph-sdk';
import { useState } from 'react';
import type { Connection } from '../keel-api';
import { readableError } from '../keel-api';
import { checkpointBefore } from '../fork';
import { textOf } from '../message-text';
import type { RunActivity } from '../run-activity';
import { HumanMessage } from './human-message';
import { RichText } from './rich-text';
import { ToolCard } from './tool-card';

interface ToolCall {
  id?: string | undefined;
  name: string;
  args: Record<string, unknown>;
}

const toolCallsOf = (message: Message): ToolCall[] =>
  message.type === 'ai' ? (message.tool_calls ?? []) : [];

/**
 * The partial answer of a stopped run: Keel marks it `response_metadata.stopped` (issue 31, the
 * stop-cli branch); an answer without the mark reads as before.
 */
const isStopped = (message: Message): boolean =>
  message.type === 'ai' && (message.response_metadata as { stopped?: unknown } | undefined)?.stopped === true;

/** Keel's own notice when a run fails (decision 0090: an `ai` message from model "keel"). */
const isKeelNotice = (message: Message): boolean =>
  message.type === 'ai' &&
  (message.response_metadata as { model_name?: string } | undefined)?.model_name === 'keel';

export interface MessageListProps {
  messages: Message[];
  connection: Connection;
  threadId: string | null;
  activity?: RunActivity;
  /** Sends an edit of message `index` from the checkpoint before it; absent while a run works. */
  onEdit?: ((index: number, checkpointId: string, text: string) => void) | undefined;
  /** The last message is still being written. */
  streaming?: boolean;
  /** Keel's notice ending the thread is said elsewhere (a budget stop with its control, a quota stop). */
  hideLastNotice?: boolean;
}

export function MessageList({
  messages,
  connection,
  threadId,
  activity,
  onEdit,
  streaming = false,
  hideLastNotice = false,
}: MessageListProps) {
  const results = new Map<string, Message>();
  for (const message of messages)
    if (message.type === 'tool' && typeof message.tool_call_id === 'string')
      results.set(message.tool_call_id, message);
  const childOf = (call: ToolCall) => {
    if (call.name !== 'spawn_agent' || call.id === undefined || threadId === null) return undefined;
    // A sub-agent's thread is `<parent>.<tool call id>`; its events say so too, with its status.
    const childThreadId = `${threadId}.${call.id}`;
    return { threadId: childThreadId, status: activity?.children[childThreadId]?.status ?? '' };
  };
  return (
    <>
      {messages.map((message, index) => {
        const key = message.id ?? `at-${index}`;
        if (message.type === 'tool') return null;
        if (message.type === 'human') {
          const checkpointId = checkpointBefore(messages, index);
          const edit =
            onEdit === undefined || checkpointId === undefined || threadId === null
              ? undefined
              : (text: string) => onEdit(index, checkpointId, text);
          return <HumanMessage key={key} text={textOf(message)} onEdit={edit} />;
        }
        if (isKeelNotice(message))
          return hideLastNotice && index === messages.length - 1 ? null : (
            <p key={key} className="notice notice-error" role="note">
              {textOf(message)}
            </p>
          );
        const text = textOf(message);
        return (
          <article
            key={key}
            className={`message ai${isStopped(message) ? ' stopped' : ''}`}
            aria-label="Assistant"
          >
            {text !== '' && (
              <RichText
                className="answer"
                text={text}
                streaming={streaming && index === messages.length - 1}
              />
            )}
            {isStopped(message) && <p className="stopped-mark">Stopped — the answer was cut short here.</p>}
            {toolCallsOf(message).map((call, position) => {
              const result = call.id === undefined ? undefined : results.get(call.id);
              const live = call.id === undefined ? undefined : activity?.tools[call.id];
              const status =
                result !== undefined
                  ? (result as { status?: string }).status === 'error'
                    ? 'error'
                    : 'ok'
                  : (live?.status ?? 'running');
              const child = childOf(call);
              return (
                <ToolCard
                  key={call.id ?? position}
                  name={call.name}
                  args={call.args}
                  status={status}
                  result={result === undefined ? live?.result : textOf(result)}
                >
                  {child !== undefined && <ChildCard {...child} connection={connection} />}
                </ToolCard>
              );
            })}
          </article>
        );
      })}
    </>
  );
}

/** Tool calls the events announced that no message holds yet (Keel commits a call with its results). */
export function liveToolCalls(messages: Message[], activity: RunActivity) {
  const known = new Set(messages.flatMap((message) => toolCallsOf(message).map((call) => call.id)));
  return Object.values(activity.tools).filter((tool) => !known.has(tool.id));
}

/** A sub-agent: its own thread, read when the card is opened. */
function ChildCard({
  threadId,
  status,
  connection,
}: {
  threadId: string;
  status: string;
  connection: Connection;
}) {
  const [messages, setMessages] = useState<Message[] | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const load = () => {
    connection.client.threads
      .getState<{ messages?: Message[] }>(threadId)
      .then((state) => setMessages(state.values.messages ?? []))
      .catch((error: unknown) => setProblem(readableError(error)));
  };
  return (
    <details
      className="child-card"
      onToggle={(event) => {
        if ((event.target as HTMLDetailsElement).open) load();
      }}
    >
      <summary>
        Sub-agent <code>{threadId}</code> {status === '' ? '' : `· ${status}`}
      </summary>
      {problem !== undefined && <p className="problem">{problem}</p>}
      {messages !== undefined && (
        <MessageList messages={messages} connection={connection} threadId={threadId} />
      )}
    </details>
  );
}
