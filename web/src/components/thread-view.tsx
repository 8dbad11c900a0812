/**
 * One thread on screen: its messages streamed token by token, tool cards, approval cards, how
 * the run stands, and the composer. What happens underneath is `useThreadStream`'s.
 */
import { useLayoutEffect, useRef } from 'react';
import { readableError } from '../keel-api';
import { useThreadStream, type ThreadStreamOptions } from '../use-thread-stream';
import { ApprovalCard } from './approval-card';
import { Composer } from './composer';
import { liveToolCalls, MessageList } from './message-list';
import { RunStatus } from './run-status';
import { ToolCard } from './tool-card';

export type ThreadViewProps = ThreadStreamOptions;

export function ThreadView(props: ThreadViewProps) {
  const { connection, assistants } = props;
  const { stream, activity, ended, problem, reconnecting, assistantId, setAssistantId, send, stop, decide } =
    useThreadStream(props);

  // Follow the newest words while the reader is at the bottom; leave them be when they scrolled up.
  const scroller = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  useLayoutEffect(() => {
    const element = scroller.current;
    if (element !== null && atBottom.current) element.scrollTop = element.scrollHeight;
  });

  // A finished run's messages as read after it ended (see useThreadStream), else the stream's.
  const messages = ended?.messages ?? stream.messages;
  const live = liveToolCalls(messages, activity);
  const waiting = Object.values(activity.decisions).filter(
    (decision) => decision.status === 'pending' || decision.status === 'sending',
  );
  const streamError = stream.error === undefined ? null : readableError(stream.error);

  return (
    <section className="thread-view" aria-label="Thread">
      <div
        className="messages"
        ref={scroller}
        onScroll={(event) => {
          const element = event.currentTarget;
          atBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight < 80;
        }}
      >
        {messages.length === 0 && !stream.isLoading && props.threadId === null && (
          <div className="empty">
            <h2>New thread</h2>
            {assistants.length > 1 && (
              <label>
                Assistant{' '}
                <select value={assistantId} onChange={(event) => setAssistantId(event.target.value)}>
                  {assistants.map((assistant) => (
                    <option key={assistant.id} value={assistant.id}>
                      {assistant.name}
                    </option>
                  ))}
                </select>
              </label>
            )}
            {assistants.length <= 1 && <p>Assistant: {assistants[0]?.name ?? assistantId}</p>}
          </div>
        )}
        <MessageList
          messages={messages}
          connection={connection}
          threadId={props.threadId}
          activity={activity}
          onEdit={
            stream.isLoading ? undefined : (index, checkpointId, text) => send(text, { index, checkpointId })
          }
        />
        {live.map((tool) => (
          <ToolCard
            key={tool.id}
            name={tool.name}
            args={tool.args}
            status={tool.status}
            result={tool.result}
            connection={connection}
          />
        ))}
        {waiting.map((decision) => (
          <ApprovalCard
            key={decision.id}
            decision={decision}
            onDecide={(choice) => decide(decision.id, choice)}
          />
        ))}
      </div>
      <RunStatus
        busy={stream.isLoading}
        reconnecting={reconnecting}
        outcome={ended?.outcome ?? null}
        usage={activity.usage}
        budget={activity.budget}
        problem={problem ?? streamError}
      />
      <Composer busy={stream.isLoading} disabled={false} onSend={send} onStop={stop} />
    </section>
  );
}
