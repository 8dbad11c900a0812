/**
 * One thread's life on LangGraph's `useStream`: sending, stopping, deciding approvals, and what
 * the run's events say. On mount it re-attaches to a run still under way (replayed from the
 * run's first event, so nothing is missed or shown twice); when a stream ends before its run did
 * (the API restarted, the network went away), or the thread cannot answer (503: no worker holds
 * it), it asks to be mounted afresh, which re-attaches again
 * (docs/decisions/0111-web-chat-reattaches-by-replay.md). How a run ended is shown together
 * with the thread's messages as read after it ended, never from an earlier read
 * (docs/decisions/0305-done-only-with-the-answer.md).
 */
import type { Message, StreamMode } from '@langchain/langgraph-sdk';
import { useStream } from '@langchain/langgraph-sdk/react';
import { useEffect, useReducer, useRef, useState } from 'react';
import { decide, pendingDecisions, type Decision } from './approvals';
import type { RunOutcome } from './components/run-status';
import { readableError, statusOf, type Connection } from './keel-api';
import { applyActivity, noActivity, type ActivityEvent, type Usage } from './run-activity';
import { defaultAssistant, titleKey, titleOf, type AssistantChoice } from './threads';

type ThreadValues = { messages: Message[] };

const streamModes: StreamMode[] = ['values', 'messages-tuple', 'custom'];
const finished = new Set(['completed', 'failed', 'cancelled', 'error', 'success', 'timeout', 'interrupted']);
const reattachDelayMs = 2_000;
const waitingPollMs = 2_000;

interface KeelRun {
  run_id: string;
  status: string;
  assistant_id?: string;
  status_reason?: string;
  error?: { message?: string };
  usage?: Usage;
}

/** The connection failed (no HTTP answer, or the stream broke): worth trying again. */
const isTransport = (error: unknown): boolean =>
  statusOf(error) === undefined && !(error instanceof Error && error.name === 'StreamError');

const outcomeOf = (run: KeelRun): RunOutcome => ({
  status: run.status,
  reason: run.status_reason,
  error: run.error?.message,
  usage: run.usage,
});

/** A finished run, and the thread's messages as read once it was known to have ended. */
export interface RunEnd {
  outcome: RunOutcome;
  messages: Message[];
}

export interface ThreadStreamOptions {
  connection: Connection;
  threadId: string | null;
  assistants: AssistantChoice[];
  /** The thread this view created with its first message. */
  onCreated: (threadId: string) => void;
  /** Something the sidebar shows changed (a run ended). */
  onChanged: () => void;
  /** Mount the thread view afresh, which re-attaches to its run. */
  onReattach: () => void;
  onUnauthorized: () => void;
}

export function useThreadStream(props: ThreadStreamOptions) {
  const { connection, assistants } = props;
  const { client } = connection;
  const [activity, note] = useReducer(applyActivity, noActivity);
  const [assistantId, setAssistantId] = useState(assistants[0]?.id ?? defaultAssistant);
  const [ended, setEnded] = useState<RunEnd | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [reconnecting, setReconnecting] = useState(false);
  const threadRef = useRef(props.threadId);
  threadRef.current = props.threadId;
  const runRef = useRef<string | null>(null);
  const stopRequested = useRef(false);
  /** Messages sent from this view: an ended run read before the latest one is not shown over it. */
  const sent = useRef(0);
  /** The run whose stream ended at an interrupt; followed again once every decision is sent. */
  const waitingRun = useRef<string | null>(null);
  const activityRef = useRef(activity);
  activityRef.current = activity;
  const propsRef = useRef(props);
  propsRef.current = props;

  // One re-attach per mount at most, and none from a view already replaced: several requests
  // fail together when the API is away, and each would otherwise mount another view.
  const mounted = useRef(true);
  const reattaching = useRef(false);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  const reattach = () => {
    if (!mounted.current || reattaching.current) return;
    reattaching.current = true;
    propsRef.current.onReattach();
  };
  const reattachSoon = () => {
    if (!mounted.current || reattaching.current) return;
    setReconnecting(true);
    window.setTimeout(reattach, reattachDelayMs);
  };

  const failed = (error: unknown) => {
    const status = statusOf(error);
    if (status === 401) propsRef.current.onUnauthorized();
    if (isTransport(error)) return reattachSoon();
    setProblem(readableError(error));
    // No worker holds the thread right now (a restart, a deploy): nothing is lost, and the
    // thread answers again once one does, so keep trying, saying why meanwhile.
    if (status === 503) reattachSoon();
  };

  /**
   * Says how a finished run ended, with the messages read after it: every read the page made
   * before (its first one, the one a stream's end makes) may predate the run's last message, and
   * may answer last. Both appear in one render, so "Done." never shows without the answer.
   */
  const showEnded = async (threadId: string, run: KeelRun) => {
    const before = sent.current;
    const state = await client.threads.getState<ThreadValues>(threadId);
    if (!mounted.current || sent.current !== before) return;
    const values = state.values as Partial<ThreadValues> | null;
    setEnded({ outcome: outcomeOf(run), messages: values?.messages ?? [] });
  };

  /** A stream ended: say how its run ended, or re-attach when the run goes on. */
  const settle = async (runId: string | undefined) => {
    const threadId = threadRef.current;
    const id = runId ?? runRef.current;
    if (threadId === null || id === null || !mounted.current) return;
    try {
      const run = (await client.runs.get(threadId, id)) as unknown as KeelRun;
      if (run.status_reason === 'awaiting_approval') {
        // The stream ended at an interrupt: the run waits for a person. Stay (a remount would
        // wipe a reason being typed) and follow the run again once it is decided.
        waitingRun.current = id;
        note({ event: 'page.decisions', data: { pending: await pendingDecisions(connection, threadId) } });
        // Decided elsewhere, timed out or cancelled: seen within a poll.
        window.setTimeout(() => void settle(id), waitingPollMs);
        return;
      }
      // Past its interrupt, or still going: what came since is replayed into a fresh view.
      if (!finished.has(run.status) || waitingRun.current === id) return reattach();
      await showEnded(threadId, run);
      propsRef.current.onChanged();
    } catch (error) {
      failed(error);
    }
  };

  const stream = useStream<ThreadValues>({
    client,
    assistantId,
    threadId: props.threadId,
    onThreadId: (threadId) => propsRef.current.onCreated(threadId),
    onCreated: (run) => {
      runRef.current = run.run_id;
      if (stopRequested.current) {
        stopRequested.current = false;
        client.runs.cancel(run.thread_id, run.run_id).catch(failed);
      }
      propsRef.current.onChanged();
    },
    onCustomEvent: (data) => note(data as ActivityEvent),
    onFinish: (_state, run) => void settle(run?.run_id),
    onError: (error, run) => {
      failed(error);
      if (!isTransport(error)) void settle(run?.run_id);
    },
  });

  useEffect(() => {
    const threadId = threadRef.current;
    if (threadId === null) return;
    let gone = false;
    void (async () => {
      try {
        const runs = (await client.runs.list(threadId, { limit: 10 })) as unknown as KeelRun[];
        if (gone) return;
        const latest = runs[0];
        if (latest?.assistant_id !== undefined) setAssistantId(latest.assistant_id);
        const active = runs.find((run) => !finished.has(run.status));
        if (active !== undefined) {
          runRef.current = active.run_id;
          // No event id: the run's stream from its first event, into this fresh page state.
          void stream.joinStream(active.run_id, undefined, { streamMode: streamModes });
        } else if (latest !== undefined) await showEnded(threadId, latest);
        const thread = (await client.threads.get(threadId)) as unknown as { usage?: Usage };
        if (thread.usage !== undefined)
          note({
            event: 'page.usage',
            data: { ...(latest?.usage === undefined ? {} : { run: latest.usage }), thread: thread.usage },
          });
        note({ event: 'page.decisions', data: { pending: await pendingDecisions(connection, threadId) } });
      } catch (error) {
        if (!gone) failed(error);
      }
    })();
    return () => {
      gone = true;
    };
    // Once per mount: a remount (a new key) is how the page re-attaches.
  }, []);

  /** Sends a message; with `edit`, in place of message `edit.index`, going on from the checkpoint before it. */
  const send = (text: string, edit?: { index: number; checkpointId: string }) => {
    stopRequested.current = false;
    runRef.current = null;
    sent.current += 1;
    // What is on screen goes on: an ended run's messages, which the stream's may lag behind.
    const shown = ended?.messages;
    note({ event: 'page.sent', data: {} });
    setEnded(null);
    setProblem(null);
    const created = threadRef.current === null;
    void stream.submit(
      { messages: [{ type: 'human', content: text }] },
      {
        streamMode: streamModes,
        // Leaving the page never cancels the run: the page re-attaches when it comes back.
        onDisconnect: 'continue',
        streamResumable: true,
        optimisticValues: (previous) => ({
          ...previous,
          messages: [
            ...(shown ?? previous.messages ?? []).slice(0, edit?.index),
            { type: 'human', content: text, id: `sending-${Date.now()}` },
          ],
        }),
        ...(edit === undefined
          ? {}
          : { checkpoint: { checkpoint_id: edit.checkpointId, checkpoint_ns: '', checkpoint_map: null } }),
        ...(created ? { metadata: { [titleKey]: titleOf(text), assistant_id: assistantId } } : {}),
      },
    );
  };

  const stop = () => {
    const threadId = threadRef.current;
    const runId = runRef.current;
    // Stopped before the API named the run: it is cancelled as soon as it is named.
    if (threadId === null || runId === null) stopRequested.current = true;
    else client.runs.cancel(threadId, runId).catch(failed);
  };

  const onDecide = (id: string, decision: Decision) => {
    const threadId = threadRef.current;
    if (threadId === null) return;
    note({ event: 'page.deciding', data: { id, state: { status: 'sending' } } });
    decide(connection, threadId, id, decision).then(
      () => {
        note({
          event: 'page.deciding',
          data: {
            id,
            state: {
              status: decision.kind,
              ...(decision.kind === 'deny' ? { reason: decision.reason } : {}),
            },
          },
        });
        const undecided = Object.values(activityRef.current.decisions).some(
          (other) => other.id !== id && (other.status === 'pending' || other.status === 'sending'),
        );
        // The run goes on past its interrupt: follow it afresh (from its first event).
        if (waitingRun.current !== null && !undecided) reattach();
      },
      (error: unknown) => {
        note({ event: 'page.deciding', data: { id, state: { status: 'pending' } } });
        setProblem(readableError(error));
      },
    );
  };

  return {
    stream,
    activity,
    ended,
    problem,
    reconnecting,
    assistantId,
    setAssistantId,
    send,
    stop,
    decide: onDecide,
  };
}
