/**
 * One thread on screen: its messages streamed token by token, tool cards, approval cards, how
 * the run stands, and the composer. What happens underneath is `useThreadStream`'s.
 */
import { useLayoutEffect, useRef } from 'react';
import { textOf } from '../message-text';
import { hasArrived, useThreadStream, type ThreadStreamOptions } from '../use-thread-stream';
import { ApprovalCard } from './approval-card';
import { Composer } from './composer';
import { liveToolCalls, MessageList } from './message-list';
import { NewThread } from './new-thread';
import { PendingMessage } from './pending-message';
import { isSaidByStatus, RunStatus } from './run-status';
import { ToolCard } from './tool-card';

export interface ThreadViewProps extends ThreadStreamOptions {
  /** The API answers: when it does not, the page says so once, above (not per thread). */
  reachable: boolean;
}

export function ThreadView(props: ThreadViewProps) {
  const { connection, assistants } = props;
  const {
    stream,
    streamProblem,
    activity,
    ended,
    problem,
    reconnecting,
    assistantId,
    setAssistantId,
    choice,
    setChoice,
    mine,
    send,
    stop,
    decide,
  } = useThreadStream(props);

  // Follow the newest words while the reader is at the bottom; leave them be when they scrolled up.
  const scroller = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  useLayoutEffect(() => {
    const element = scroller.current;
    if (element !== null && atBottom.current) element.scrollTop = element.scrollHeight;
  });

  // A finished run's messages as read after it ended (see useThreadStream), else the stream's;
  // up to where the first message not yet in the thread goes (an edit cuts what followed).
  const thread = ended?.messages ?? stream.messages;
  const pending = mine.filter((item) => !hasArrived(thread, item, textOf));
  const messages = pending[0] === undefined ? thread : thread.slice(0, pending[0].at);
  const live = pending.length > 0 ? [] : liveToolCalls(messages, activity);
  const waiting = Object.values(activity.decisions).filter(
    (decision) => decision.status === 'pending' || decision.status === 'sending',
  );

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
        {messages.length === 0 && pending.length === 0 && !stream.isLoading && props.threadId === null && (
          <NewThread
            assistants={assistants}
            assistantId={assistantId}
            onAssistant={setAssistantId}
            choice={choice}
            onChoice={setChoice}
          />
        )}
        <MessageList
          messages={messages}
          connection={connection}
          threadId={props.threadId}
          activity={activity}
          streaming={stream.isLoading}
          hideLastNotice={isSaidByStatus(ended?.outcome ?? null)}
          onEdit={
            stream.isLoading || pending.length > 0
              ? undefined
              : (index, checkpointId, text) => send(text, { index, checkpointId })
          }
        />
        {pending.map((item) => (
          <PendingMessage key={item.key} item={item} />
        ))}
        {live.map((tool) => (
          <ToolCard
            key={tool.id}
            name={tool.name}
            args={tool.args}
            status={tool.status}
            result={tool.result}
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
        problem={props.reachable ? (problem ?? streamProblem) : null}
        needsApproval={waiting.length > 0}
        sending={pending.length > 0}
        connection={connection}
        threadId={props.threadId}
      />
      <Composer busy={stream.isLoading} disabled={false} onSend={send} onStop={stop} />
    </section>
  );
}
