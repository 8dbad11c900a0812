/** A task conversation's pure parts: its start from earlier messages and what it reports at the end. */
import type { CallModelResult } from '../../common/activities';
import type { ConversationTask } from '../../common/agents';
import type { SubmitInput } from '../../common/messages';
import { findTranscriptViolation } from '../../common/transcript';
import { reduce } from '../../workflows/core/reducer';
import { type ThreadState } from '../../workflows/core/state';
import { modelMessages } from '../../workflows/core/transcript';
import type { ConversationEvent } from '../../workflows/core/transitions';
import { agentFinished, withEarlierMessages } from '../../workflows/core/task';
import { freshThread, oneTokenUsage, t0 } from '../helpers/reducer';

const fresh = (): ThreadState => freshThread();
const input = (run_id: string, text: string): SubmitInput => ({
  run_id,
  assistant_id: 'agent',
  content: [{ type: 'text', text }],
  multitask_strategy: 'enqueue',
  metadata: {},
});
const answer: CallModelResult = {
  content: [{ type: 'text', text: 'done' }],
  stop_reason: 'end_turn',
  usage: oneTokenUsage,
  model: 'scripted-demo',
  tools: {},
};

function apply(state: ThreadState, events: ConversationEvent[]): ThreadState {
  return events.reduce((current, event) => reduce(current, event).state, state);
}

describe('a task conversation', () => {
  it('starts with the caller’s earlier messages in its transcript, before any run', () => {
    const task: ConversationTask = {
      input: input('task', 'and now?'),
      earlier: [
        { role: 'user', content: [{ type: 'text', text: 'list the files' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'list_files', input: {} }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'One file.' }] },
      ],
    };
    const state = withEarlierMessages(fresh(), task);
    expect(state.transcript.map(({ id, run_id, role }) => `${id} ${run_id} ${role}`)).toEqual([
      'm1 earlier user',
      'm2 earlier assistant',
      'm3 earlier user',
      'm4 earlier assistant',
    ]);
    expect(state.transcript[1]).toMatchObject({ model: 'scripted:demo', stop_reason: 'tool_use' });
    expect(state.transcript[3]).toMatchObject({ stop_reason: 'end_turn' });
    expect(state.runs).toEqual([]);
    // The first run's model call sees them, followed by the task.
    const started = apply(state, [{ type: 'inputSubmitted', now: t0 + 1, input: task.input }]);
    const seen = modelMessages(started);
    expect(seen.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(findTranscriptViolation(seen)).toBeUndefined();
  });

  it('starts empty without earlier messages', () => {
    expect(withEarlierMessages(fresh(), { input: input('task', 'x') })).toEqual(fresh());
  });

  it('reports its last real run, not a message refused as it closed', () => {
    const state = apply(fresh(), [
      { type: 'inputSubmitted', now: t0 + 1, input: input('task', 'hello') },
      { type: 'modelResponded', now: t0 + 2, run_id: 'task', step: 1, result: answer },
      { type: 'closeRequested', now: t0 + 3, reason: 'its task is done' },
      {
        type: 'inputRefused',
        now: t0 + 4,
        input: input('message-late', 'too late'),
        refusal: { type: 'ThreadClosed', message: 'thread t1 is closed' },
      },
    ]);
    expect(state.runs.map((run) => `${run.run_id} ${run.status} ${run.status_reason ?? ''}`)).toEqual([
      'task completed ',
      'message-late failed thread_closed',
    ]);
    expect(agentFinished(state)).toMatchObject({ status: 'completed', output: 'done', runs: 1 });
  });
  it("says cancelled when cancel() follows send(text): the close cancelled the agent's message", () => {
    const state = apply(fresh(), [
      { type: 'inputSubmitted', now: t0 + 1, input: input('task', 'hello') },
      { type: 'modelResponded', now: t0 + 2, run_id: 'task', step: 1, result: answer },
      { type: 'inputSubmitted', now: t0 + 3, input: input('message-1', 'one more thing') },
      { type: 'closeRequested', now: t0 + 4, reason: 'cancelled by the workflow that started it' },
    ]);
    expect(state.runs.map((run) => `${run.run_id} ${run.status} ${run.status_reason ?? ''}`)).toEqual([
      'task completed ',
      'message-1 cancelled thread_closed',
    ]);
    expect(agentFinished(state)).toMatchObject({ status: 'cancelled', status_reason: 'thread_closed' });
  });
});
