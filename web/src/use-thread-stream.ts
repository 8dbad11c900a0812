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
import { textOf } from './message-text';
import { decide, pendingDecisions, type Decision } from './approvals';
import type { RunOutcome } from './components/run-status';
import { streamModes as deliveryModes } from './delivery';
import { readableError, statusOf, type Connection } from './keel-api';
import { freshId, outbox, useOutbox, type Outgoing } from './outbox';
import { applyActivity, noActivity, type ActivityEvent, type Usage } from './run-activity';
import { defaultAssistant, titleKey, titleOf, type AssistantChoice } from './threads';

type ThreadValues = { messages: Message[] };

const streamModes: StreamMode[] = [...deliveryModes];

/** What a new thread is made with, chosen in the page. */
export interface NewThreadChoice {
  /** `provider:model`; empty for the deployment's (or the assistant's) default. */
  model: string;
  /** Empty for the deployment's default. */
  approval: '' | 'auto' | 'require';
}

/** The human message `item` stands for, if `messages` hold it (at or after where it was sent). */
export function hasArrived(
  messages: readonly Message[],
  item: Outgoing,
  textOf: (message: Message) => string,
) {
  return messages
    .slice(item.at)
    .some((message) => message.type === 'human' && textOf(message).trim() === item.text.trim());
}
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

/**
 * The connection failed (no HTTP answer, or the stream broke): worth trying again. An `error`
 * event on the stream (a run that failed, by its failure type: `BudgetExceeded` …) is not: the
 * run's end says what happened.
 */
const isTransport = (error: unknown): boolean =>
  statusOf(error) === undefined &&
  (error instanceof TypeError ||
    !(error instanceof Error) ||
    error.name === 'Error' ||
    error.name === 'MaxReconnectAttemptsError');

/** A failed run, as its stream's `error` event says it: said again, better, when the run is read. */
const isRunFailure = (error: unknown): boolean => statusOf(error) === undefined && !isTransport(error);

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
  const [choice, setChoice] = useState<NewThreadChoice>({ model: '', approval: '' });
  const outgoing = useOutbox();
  /** This view's messages not yet in the thread: for a new thread, those that will make it. */
  const mine = outgoing.filter((item) =>
    props.threadId === null ? item.opens === true : item.threadId === props.threadId,
  );
  /** Runs this view has joined (a message the API took is followed once). */
  const joined = useRef(new Set<string>());
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
    if (isRunFailure(error)) return;
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

  /**
   * Sends a message; with `edit`, in place of message `edit.index`, going on from the checkpoint
   * before it. It goes to the outbox, which delivers it (now, or once the API answers); it is on
   * screen as pending until the thread's messages hold it, and what followed an edited message
   * leaves the screen at once.
   */
  const send = (text: string, edit?: { index: number; checkpointId: string }) => {
    stopRequested.current = false;
    runRef.current = null;
    sent.current += 1;
    note({ event: 'page.sent', data: {} });
    setProblem(null);
    const shown = ended?.messages ?? stream.messages;
    const making = props.threadId === null ? mine[0]?.threadId : undefined;
    const threadId = props.threadId ?? making ?? freshId();
    const config = {
      ...(choice.model.trim() === '' ? {} : { model: choice.model.trim() }),
      ...(choice.approval === '' ? {} : { approval: choice.approval }),
    };
    outbox.add({
      key: freshId(),
      threadId,
      ...(props.threadId === null ? { opens: true } : {}),
      ...(props.threadId === null && making === undefined
        ? { create: { metadata: { [titleKey]: titleOf(text), assistant_id: assistantId }, config } }
        : {}),
      text,
      assistantId,
      ...(assistantId !== defaultAssistant && config.model !== undefined ? { model: config.model } : {}),
      ...(edit === undefined ? {} : { checkpointId: edit.checkpointId }),
      at: edit?.index ?? shown.length + mine.length,
      state: 'sending',
    });
  };

  // A message the API took: a new thread is opened, and the run is followed from its first event.
  useEffect(() => {
    const taken = mine.filter((item) => item.state === 'taken' && item.runId !== undefined);
    if (props.threadId === null) {
      const made = taken[0];
      if (made !== undefined) {
        for (const item of mine)
          if (item.threadId === made.threadId) outbox.update(item.key, { opens: false });
        propsRef.current.onCreated(made.threadId);
      }
      return;
    }
    const fresh = taken.filter((item) => !joined.current.has(item.runId!));
    const latest = fresh.at(-1);
    if (latest === undefined) return;
    for (const item of fresh) joined.current.add(item.runId!);
    runRef.current = latest.runId!;
    if (stopRequested.current) {
      stopRequested.current = false;
      client.runs.cancel(latest.threadId, latest.runId!).catch(failed);
    }
    propsRef.current.onChanged();
    void stream.joinStream(latest.runId!, undefined, { streamMode: streamModes });
  });

  // A message the thread now holds is shown from the thread, no longer as pending.
  useEffect(() => {
    for (const item of mine) {
      if (item.state !== 'taken') continue;
      if (hasArrived(stream.messages, item, textOf)) {
        // The stream is ahead of the ended run read before this message was sent.
        if (ended !== null && !hasArrived(ended.messages, item, textOf)) setEnded(null);
        outbox.remove(item.key);
      } else if (ended !== null && hasArrived(ended.messages, item, textOf)) outbox.remove(item.key);
    }
  });

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

  /** What the stream's own failure says, unless the run's end says it (better) instead. */
  const streamProblem =
    stream.error === undefined || isRunFailure(stream.error) ? null : readableError(stream.error);

  return {
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
    decide: onDecide,
  };
}
