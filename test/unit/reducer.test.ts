import type { CallModelResult } from '../../common/activities';
import type { SubmitInput } from '../../common/messages';
import { findTranscriptViolation, type AssistantContent } from '../../common/transcript';
import { reduce } from '../../workflows/core/reducer';
import { type ThreadState, threadStatus } from '../../workflows/core/state';
import { modelMessages } from '../../workflows/core/transcript';
import type { Command, ConversationEvent, Transition } from '../../workflows/core/transitions';
import { validateSubmit } from '../../workflows/core/validate';
import { resumeCommands } from '../../workflows/core/views';
import { freshThread, t0 } from '../helpers/reducer';

const fresh = (): ThreadState => freshThread();

const input = (
  run_id: string,
  text = 'hello',
  strategy: SubmitInput['multitask_strategy'] = 'enqueue',
): SubmitInput => ({
  run_id,
  assistant_id: 'agent',
  content: [{ type: 'text', text }],
  multitask_strategy: strategy,
  metadata: {},
});

const usage = {
  input_tokens: 10,
  output_tokens: 5,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cost_usd: 0.001,
};
const flags = { sideEffects: true, sensitive: true };
const readOnly = { sideEffects: false, sensitive: false };

const reply = (
  content: AssistantContent[],
  stop_reason: CallModelResult['stop_reason'],
  tools: CallModelResult['tools'] = {},
): CallModelResult => ({
  content,
  stop_reason,
  usage,
  model: 'scripted-demo',
  tools,
});

const text = (value: string) => ({ type: 'text' as const, text: value });
const use = (id: string, name = 'bash') => ({
  type: 'tool_use' as const,
  id,
  name,
  input: { command: `echo ${id}` },
});

const submitted = (
  run_id: string,
  text_ = 'hello',
  strategy?: SubmitInput['multitask_strategy'],
): ConversationEvent => ({
  type: 'inputSubmitted',
  now: t0 + 1,
  input: input(run_id, text_, strategy),
});
const responded = (run_id: string, step: number, result: CallModelResult): ConversationEvent => ({
  type: 'modelResponded',
  now: t0 + 2,
  run_id,
  step,
  result,
});
const toolDone = (
  run_id: string,
  tool_use_id: string,
  content = 'ok',
  is_error = false,
): ConversationEvent => ({
  type: 'toolFinished',
  now: t0 + 3,
  run_id,
  tool_use_id,
  outcome: { content, is_error },
});

/** Replays events from a fresh state, checking the invariants after each. */
function play(events: ConversationEvent[], from = fresh()): ThreadState {
  return events.reduce((state, event) => checked(reduce(state, event)).state, from);
}

function checked(transition: Transition): Transition {
  expect(findTranscriptViolation(modelMessages(transition.state))).toBeUndefined();
  return transition;
}

const kinds = (commands: Command[]) =>
  commands.map((command) => (command.type === 'emit' ? command.event.event : command.type));
const runOf = (state: ThreadState, id: string) => state.runs.find((run) => run.run_id === id)!;

// States the conversation can be in, each built by real events.
const states = {
  idle: () => fresh(),
  modelStep: () => play([submitted('r1')]),
  toolsStep: () =>
    play([
      submitted('r1', 'run: a\nrun: b\nrun: c'),
      responded('r1', 1, reply([text('x'), use('u1'), use('u2'), use('u3')], 'tool_use', { bash: flags })),
    ]),
  finished: () => play([submitted('r1'), responded('r1', 1, reply([text('done')], 'end_turn'))]),
  closed: () => play([{ type: 'closeRequested', now: t0 }]),
};

describe('the conversation reducer', () => {
  describe.each([
    ['an idle thread', states.idle],
    ['a thread whose last run finished', states.finished],
  ])('given %s', (_name, given) => {
    it('starts a submitted run at once: the input enters the transcript and the model is called', () => {
      const { state, commands } = checked(reduce(given(), submitted('r9', 'what now?')));
      expect(kinds(commands)).toEqual(['run.created', 'run.started', 'message.started', 'callModel']);
      expect(runOf(state, 'r9')).toMatchObject({ status: 'running', steps: 0 });
      expect(state.active).toMatchObject({ run_id: 'r9', steps: 1, step: { kind: 'model' } });
      expect(state.transcript.at(-1)).toMatchObject({
        role: 'user',
        content: [text('what now?')],
        run_id: 'r9',
      });
      expect(threadStatus(state)).toBe('busy');
    });

    it('ignores a model answer or tool result for no active run', () => {
      const before = given();
      expect(reduce(before, responded('r1', 1, reply([text('late')], 'end_turn'))).state.transcript).toEqual(
        before.transcript,
      );
      expect(reduce(before, toolDone('r1', 'u1')).commands).toEqual([]);
    });
  });

  describe('given a run waiting for the model', () => {
    it('completes the run when the model ends its turn, with the answer as output', () => {
      const { state, commands } = checked(
        reduce(states.modelStep(), responded('r1', 1, reply([text('All done.')], 'end_turn'))),
      );
      expect(kinds(commands)).toEqual(['usage.updated', 'message.completed', 'run.completed']);
      expect(runOf(state, 'r1')).toMatchObject({ status: 'completed', output: 'All done.', steps: 1, usage });
      expect(state.active).toBeNull();
      expect(state.transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(state.usage.input_tokens).toBe(10);
      expect(threadStatus(state)).toBe('idle');
    });

    it('publishes the text the call had not yet streamed before anything else about the answer', () => {
      const result = {
        ...reply([text('All done.')], 'end_turn'),
        unpublished_delta: { attempt: 2, text: 'done.' },
      };
      const { commands } = checked(reduce(states.modelStep(), responded('r1', 1, result)));
      expect(kinds(commands)).toEqual([
        'message.delta',
        'usage.updated',
        'message.completed',
        'run.completed',
      ]);
      expect(commands[0]).toEqual({
        type: 'emit',
        event: { event: 'message.delta', data: { run_id: 'r1', step: 1, attempt: 2, text: 'done.' } },
      });
      // A late answer for a step that is no longer current publishes nothing at all.
      expect(reduce(states.finished(), responded('r1', 1, result)).commands).toEqual([]);
    });

    it('runs three tools at once when the model asks for three, keeping the answer out of the transcript until all finish', () => {
      const result = reply([text('x'), use('u1'), use('u2'), use('u3', 'read_file')], 'tool_use', {
        bash: flags,
        read_file: readOnly,
      });
      const { state, commands } = checked(reduce(states.modelStep(), responded('r1', 1, result)));
      const runs = commands.filter((c): c is Extract<Command, { type: 'runTool' }> => c.type === 'runTool');
      expect(runs.map((c) => [c.use.id, c.flags.sideEffects])).toEqual([
        ['u1', true],
        ['u2', true],
        ['u3', false],
      ]);
      expect(kinds(commands).filter((k) => k === 'tool.started')).toHaveLength(3);
      expect(state.active?.step.kind).toBe('tools');
      expect(state.transcript.map((m) => m.role)).toEqual(['user']);
    });

    it('answers an unknown tool with an error result and asks the model again', () => {
      const { state, commands } = checked(
        reduce(states.modelStep(), responded('r1', 1, reply([use('u1', 'teleport')], 'tool_use', {}))),
      );
      expect(kinds(commands)).toContain('callModel');
      const results = state.transcript.at(-1)!;
      expect(results).toMatchObject({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'u1', is_error: true }],
      });
      expect(JSON.stringify(results)).toContain('Unknown tool');
      expect(state.active).toMatchObject({ steps: 2, step: { kind: 'model' } });
    });

    it.each([
      ['max_tokens', 'max_tokens'],
      ['refusal', 'refusal'],
    ] as const)('ends the run with reason %s and never runs a tool the answer was cut in', (stop, reason) => {
      const { state, commands } = checked(
        reduce(
          states.modelStep(),
          responded('r1', 1, reply([text('partial'), use('u1')], stop, { bash: flags })),
        ),
      );
      expect(kinds(commands)).not.toContain('runTool');
      expect(runOf(state, 'r1')).toMatchObject({ status: 'completed', status_reason: reason });
      expect(JSON.stringify(state.transcript)).not.toContain('tool_use');
    });

    it('logs the text a call streamed live once, whole, under its attempt, before the answer', () => {
      const { commands } = checked(
        reduce(
          states.modelStep(),
          responded('r1', 1, {
            ...reply([text('the '), text('answer')], 'end_turn'),
            streamed: { attempt: 2 },
          }),
        ),
      );
      expect(kinds(commands).slice(0, 3)).toEqual(['message.delta', 'usage.updated', 'message.completed']);
      const whole = commands.find(
        (command) => command.type === 'emit' && command.event.event === 'message.delta',
      );
      expect(whole).toMatchObject({
        event: { data: { run_id: 'r1', step: 1, attempt: 2, text: 'the answer', whole: true } },
      });
    });

    it('logs the streamed text the call reports when it is not the answer’s', () => {
      const { commands } = checked(
        reduce(
          states.modelStep(),
          responded('r1', 1, {
            ...reply([text('answer')], 'end_turn'),
            streamed: { attempt: 1, text: 'answer <tool>…</tool>' },
          }),
        ),
      );
      expect(commands[0]).toMatchObject({ event: { data: { text: 'answer <tool>…</tool>', whole: true } } });
    });

    it('calls the model again in a new step after pause_turn', () => {
      const { state, commands } = checked(
        reduce(states.modelStep(), responded('r1', 1, reply([text('thinking…')], 'pause_turn'))),
      );
      expect(kinds(commands)).toEqual(['usage.updated', 'message.completed', 'message.started', 'callModel']);
      expect(state.active?.steps).toBe(2);
    });

    it('fails the run with a readable notice when the model fails for good, and the next run starts', () => {
      const queued = play([submitted('r2', 'second')], states.modelStep());
      const failed: ConversationEvent = {
        type: 'modelFailed',
        now: t0 + 5,
        run_id: 'r1',
        step: 1,
        error: { type: 'ModelAuthenticationFailed', message: 'check ANTHROPIC_API_KEY' },
      };
      const { state, commands } = checked(reduce(queued, failed));
      expect(runOf(state, 'r1')).toMatchObject({
        status: 'failed',
        status_reason: 'model_error',
        error: { type: 'ModelAuthenticationFailed' },
      });
      expect(
        state.transcript.some(
          (m) =>
            m.role === 'assistant' &&
            m.model === 'keel' &&
            JSON.stringify(m).includes('check ANTHROPIC_API_KEY'),
        ),
      ).toBe(true);
      expect(modelMessages(state).some((m) => JSON.stringify(m).includes('The run failed'))).toBe(false);
      expect(kinds(commands)).toEqual(['run.failed', 'run.started', 'message.started', 'callModel']);
      expect(state.active?.run_id).toBe('r2');
    });

    it.each([
      ['a failure type Keel does not know', { type: 'SomeSdkError', message: 'odd' }],
      ['a failure without a type', { message: 'odd' }],
    ])('fails the run as InternalError for %s, keeping its message', (_name, error) => {
      const failed: ConversationEvent = { type: 'modelFailed', now: t0 + 5, run_id: 'r1', step: 1, error };
      const { state } = checked(reduce(states.modelStep(), failed));
      expect(runOf(state, 'r1').error).toEqual({ type: 'InternalError', message: 'odd' });
    });

    it('ignores an answer for a step that is not the current one (a late retry)', () => {
      const before = states.modelStep();
      expect(reduce(before, responded('r1', 7, reply([text('stale')], 'end_turn'))).state).toBe(before);
    });

    it('stops a run that reaches its step limit, as failed with max_steps', () => {
      let state = states.modelStep();
      for (let step = 1; step <= 5; step++)
        state = play([responded('r1', step, reply([text('again')], 'pause_turn'))], state);
      expect(runOf(state, 'r1')).toMatchObject({
        status: 'failed',
        status_reason: 'max_steps',
        error: { type: 'MaxStepsReached' },
      });
      expect(state.active).toBeNull();
    });

    it('cancels the run: activities are stopped and the transcript stays valid', () => {
      const { state, commands } = checked(
        reduce(states.modelStep(), {
          type: 'cancelRequested',
          now: t0 + 9,
          run_id: 'r1',
          reason: 'changed my mind',
        }),
      );
      expect(kinds(commands)).toEqual(['cancelActivities', 'run.cancelled']);
      expect(runOf(state, 'r1')).toMatchObject({
        status: 'cancelled',
        status_reason: 'cancelled_by_user',
        error: { message: 'changed my mind' },
      });
    });
  });

  describe('a Stop that keeps what was said (keep_partial)', () => {
    const stop = (run_id = 'r1'): ConversationEvent => ({
      type: 'cancelRequested',
      now: t0 + 5,
      run_id,
      reason: 'stopped',
      keep_partial: true,
    });
    const stopped = (text_: string, step = 1): ConversationEvent => ({
      type: 'modelStopped',
      now: t0 + 6,
      run_id: 'r1',
      step,
      text: text_,
    });
    const stopping = () => play([stop()], states.modelStep());

    it('tells the call to stop and waits for it, the run still active', () => {
      const { state, commands } = reduce(states.modelStep(), stop());
      expect(kinds(commands)).toEqual(['cancelActivities']);
      expect(runOf(state, 'r1').status).toBe('running');
      expect(state.active?.step).toEqual({
        kind: 'model',
        stopping: { reason: 'cancelled_by_user', error: { type: 'Cancelled', message: 'stopped' } },
      });
    });

    it('asks only once: a second Stop changes nothing', () => {
      const before = stopping();
      expect(reduce(before, stop())).toEqual({ state: before, commands: [] });
    });

    it('commits the streamed text as an answer marked stopped, then ends the run cancelled', () => {
      const { state, commands } = checked(reduce(stopping(), stopped('Half an ans')));
      expect(kinds(commands)).toEqual(['message.completed', 'run.cancelled']);
      expect(state.transcript.at(-1)).toMatchObject({
        role: 'assistant',
        content: [{ type: 'text', text: 'Half an ans' }],
        stopped: true,
      });
      expect(runOf(state, 'r1')).toMatchObject({ status: 'cancelled', status_reason: 'cancelled_by_user' });
      expect(state.active).toBeNull();
    });

    it('logs a live call’s stopped text whole first, for the streams that did not read its last pieces', () => {
      const { commands } = checked(
        reduce(stopping(), {
          type: 'modelStopped',
          now: t0 + 6,
          run_id: 'r1',
          step: 1,
          text: 'Half an ans',
          streamed: { attempt: 2 },
        }),
      );
      expect(kinds(commands)).toEqual(['message.delta', 'message.completed', 'run.cancelled']);
      expect(commands[0]).toMatchObject({
        event: {
          event: 'message.delta',
          data: { run_id: 'r1', step: 1, attempt: 2, text: 'Half an ans', whole: true },
        },
      });
    });

    it('logs no whole text for a stopped call of the history channel, whose deltas are in the log', () => {
      const { commands } = reduce(stopping(), stopped('Half an ans'));
      expect(kinds(commands)).not.toContain('message.delta');
    });

    it.each([
      ['nothing', ''],
      ['only whitespace (which Anthropic refuses as a text block)', ' \n '],
    ])('keeps no message when the call had streamed %s', (_, partial) => {
      const { state, commands } = reduce(stopping(), stopped(partial));
      expect(kinds(commands)).toEqual(['run.cancelled']);
      expect(state.transcript.map((m) => m.role)).toEqual(['user']);
    });

    it('keeps only the text of an answer that came before the call stopped, never its tool calls', () => {
      const answer = reply([text('Let me look. '), use('u1')], 'tool_use', { bash: flags });
      const { state, commands } = checked(reduce(stopping(), responded('r1', 1, answer)));
      expect(kinds(commands)).toEqual(['usage.updated', 'message.completed', 'run.cancelled']);
      expect(state.transcript.at(-1)).toMatchObject({
        content: [{ type: 'text', text: 'Let me look. ' }],
        stopped: true,
      });
      expect(runOf(state, 'r1').usage).toEqual(usage);
    });

    it('ends the run cancelled, not failed, when the stopping call fails instead', () => {
      const failed: ConversationEvent = {
        type: 'modelFailed',
        now: t0 + 6,
        run_id: 'r1',
        step: 1,
        error: { type: 'ModelOverloaded', message: 'overloaded' },
      };
      const { state } = reduce(stopping(), failed);
      expect(runOf(state, 'r1')).toMatchObject({ status: 'cancelled', status_reason: 'cancelled_by_user' });
      expect(state.transcript.map((m) => m.role)).toEqual(['user']);
    });

    it('starts the next queued run only after the stopped answer is in, so turns stay in order', () => {
      let state = play([submitted('r2', 'next'), stop()], states.modelStep());
      expect(state.active?.run_id).toBe('r1');
      const { state: after, commands } = checked(reduce(state, stopped('Partial')));
      state = after;
      expect(kinds(commands)).toEqual([
        'message.completed',
        'run.cancelled',
        'run.started',
        'message.started',
        'callModel',
      ]);
      expect(state.transcript.map((m) => [m.role, m.role === 'assistant' && m.stopped === true])).toEqual([
        ['user', false],
        ['assistant', true],
        ['user', false],
      ]);
    });

    it('ignores a stopped call that is no longer current (a closed thread ended the run at once)', () => {
      const closed = play([{ type: 'closeRequested', now: t0 + 6 }], stopping());
      expect(runOf(closed, 'r1').status).toBe('cancelled');
      expect(reduce(closed, stopped('late')).commands).toEqual([]);
    });

    it('re-issues a stopping call after continue-as-new and stops it at once', () => {
      expect(resumeCommands(stopping()).map((command) => command.type)).toEqual([
        'callModel',
        'cancelActivities',
      ]);
    });

    it('while tools run, cancels at once as before: the calls get results saying why', () => {
      const { state } = checked(reduce(states.toolsStep(), stop()));
      expect(runOf(state, 'r1').status).toBe('cancelled');
    });
  });

  describe('an interrupt or a close that keeps what was said (keep_partial)', () => {
    const interrupt: ConversationEvent = {
      ...(submitted('r2', 'instead', 'interrupt') as Extract<ConversationEvent, { type: 'inputSubmitted' }>),
      keep_partial: true,
    };
    const close: ConversationEvent = { type: 'closeRequested', now: t0 + 5, keep_partial: true };
    const stopped = (text_: string): ConversationEvent => ({
      type: 'modelStopped',
      now: t0 + 6,
      run_id: 'r1',
      step: 1,
      text: text_,
    });

    it('an interrupt stops the call and queues its run behind the stopped answer', () => {
      const { state, commands } = reduce(states.modelStep(), interrupt);
      expect(kinds(commands)).toEqual(['run.created', 'cancelActivities']);
      expect(state.active?.run_id).toBe('r1');
      expect(state.active?.step).toMatchObject({ kind: 'model', stopping: { reason: 'superseded' } });
      const { state: after, commands: next } = checked(reduce(state, stopped('Half of it')));
      expect(kinds(next)).toEqual([
        'message.completed',
        'run.cancelled',
        'run.started',
        'message.started',
        'callModel',
      ]);
      expect(runOf(after, 'r1')).toMatchObject({ status: 'cancelled', status_reason: 'superseded' });
      expect(after.transcript.map((m) => (m.role === 'assistant' ? [m.role, m.stopped] : [m.role]))).toEqual([
        ['user'],
        ['assistant', true],
        ['user'],
      ]);
    });

    it('without keep_partial an interrupt ends the run at once, as before the patch', () => {
      const { state } = reduce(states.modelStep(), submitted('r2', 'instead', 'interrupt'));
      expect(runOf(state, 'r1').status).toBe('cancelled');
      expect(state.active?.run_id).toBe('r2');
    });

    it('a close stops the call and ends the run once it has, keeping its text; nothing starts after', () => {
      const queued = play([submitted('r2', 'later')], states.modelStep());
      const { state, commands } = reduce(queued, close);
      expect(kinds(commands)).toEqual(['cancelActivities', 'run.cancelled']);
      expect(state).toMatchObject({ closed: true, active: { run_id: 'r1' } });
      expect(runOf(state, 'r2').status).toBe('cancelled');
      const { state: after, commands: next } = checked(reduce(state, stopped('Said so far')));
      expect(kinds(next)).toEqual(['message.completed', 'run.cancelled']);
      expect(after.active).toBeNull();
      expect(runOf(after, 'r1')).toMatchObject({ status: 'cancelled', status_reason: 'thread_closed' });
      expect(after.transcript.at(-1)).toMatchObject({
        content: [{ type: 'text', text: 'Said so far' }],
        stopped: true,
      });
    });

    it('a close while a Stop is stopping the call waits for it too', () => {
      const stopping = play(
        [{ type: 'cancelRequested', now: t0 + 4, run_id: 'r1', keep_partial: true }],
        states.modelStep(),
      );
      const { state, commands } = reduce(stopping, close);
      expect(commands).toEqual([]);
      expect(state).toMatchObject({ closed: true, active: { run_id: 'r1' } });
      expect(runOf(reduce(state, stopped('x')).state, 'r1')).toMatchObject({
        status: 'cancelled',
        status_reason: 'cancelled_by_user',
      });
    });
  });

  describe('given a run whose tools are running', () => {
    it('records each result, and commits the answer with all results in one step when the last arrives', () => {
      let state = play([toolDone('r1', 'u2', 'two')], states.toolsStep());
      expect(state.transcript).toHaveLength(1);
      state = play([toolDone('r1', 'u1', 'one', true)], state);
      const { state: last, commands } = checked(reduce(state, toolDone('r1', 'u3', 'three')));
      expect(kinds(commands)).toEqual([
        'tool.completed',
        'message.completed',
        'message.started',
        'callModel',
      ]);
      const results = last.transcript.at(-1)!;
      expect(
        results.content.map((b) =>
          b.type === 'tool_result' ? [b.tool_use_id, b.content, b.is_error ?? false] : b,
        ),
      ).toEqual([
        ['u1', 'one', true],
        ['u2', 'two', false],
        ['u3', 'three', false],
      ]);
      expect(last.active).toMatchObject({ steps: 2, step: { kind: 'model' } });
    });

    it('ignores a second result for the same call', () => {
      const once = play([toolDone('r1', 'u1', 'first')], states.toolsStep());
      expect(reduce(once, toolDone('r1', 'u1', 'second')).state).toBe(once);
    });

    it('truncates a huge tool output in the transcript, saying how much was cut', () => {
      const huge = 'x'.repeat(100_000);
      const state = play(
        [toolDone('r1', 'u1', huge), toolDone('r1', 'u2'), toolDone('r1', 'u3')],
        states.toolsStep(),
      );
      const result = JSON.stringify(state.transcript.at(-1));
      expect(result.length).toBeLessThan(40_000);
      expect(result).toContain('of 100000 characters');
    });

    it('on cancel, answers every unfinished call with an error saying it may have partly run', () => {
      const partial = play([toolDone('r1', 'u1')], states.toolsStep());
      const { state } = checked(reduce(partial, { type: 'cancelRequested', now: t0 + 9, run_id: 'r1' }));
      const results = state.transcript.at(-1)!;
      expect(results.content.filter((b) => b.type === 'tool_result' && b.is_error === true)).toHaveLength(2);
      expect(JSON.stringify(results)).toContain('may have partly run');
      expect(runOf(state, 'r1').status).toBe('cancelled');
    });

    it('re-issues only the unfinished calls after continue-as-new', () => {
      const partial = play([toolDone('r1', 'u2')], states.toolsStep());
      expect(resumeCommands(partial).map((c) => (c.type === 'runTool' ? c.use.id : c.type))).toEqual([
        'u1',
        'u3',
      ]);
    });
  });

  describe('runs arriving while a run is active', () => {
    it('queues under enqueue and starts them in order', () => {
      let state = play([submitted('r2'), submitted('r3')], states.modelStep());
      expect(state.queue.map((q) => q.run_id)).toEqual(['r2', 'r3']);
      expect(runOf(state, 'r2').status).toBe('queued');
      state = play([responded('r1', 1, reply([text('one')], 'end_turn'))], state);
      expect(state.active?.run_id).toBe('r2');
      state = play([responded('r2', 1, reply([text('two')], 'end_turn'))], state);
      expect(state.active?.run_id).toBe('r3');
    });

    it('rejects under reject with ThreadBusy', () => {
      expect(validateSubmit(states.modelStep(), input('r2', 'x', 'reject'))).toMatchObject({
        type: 'ThreadBusy',
      });
      expect(validateSubmit(states.idle(), input('r2', 'x', 'reject'))).toBeUndefined();
    });

    it('under interrupt cancels the active run first, with a valid transcript, then runs the new one', () => {
      const { state, commands } = checked(
        reduce(states.toolsStep(), submitted('r2', 'stop that', 'interrupt')),
      );
      expect(runOf(state, 'r1')).toMatchObject({ status: 'cancelled', status_reason: 'superseded' });
      expect(state.active?.run_id).toBe('r2');
      expect(kinds(commands)).toEqual([
        'run.created',
        'cancelActivities',
        'message.completed',
        'run.cancelled',
        'run.started',
        'message.started',
        'callModel',
      ]);
    });

    it('cancels a queued run without touching the active one', () => {
      const state = play(
        [submitted('r2'), { type: 'cancelRequested', now: t0 + 4, run_id: 'r2' }],
        states.modelStep(),
      );
      expect(runOf(state, 'r2').status).toBe('cancelled');
      expect(state.queue).toEqual([]);
      expect(state.active?.run_id).toBe('r1');
    });
  });

  describe('deferral', () => {
    it('marks a running run deferred, keeps it working, and completes it later', () => {
      let state = play([{ type: 'runDeferred', now: t0 + 4, run_id: 'r1' }], states.modelStep());
      expect(runOf(state, 'r1').status).toBe('deferred');
      expect(state.active?.run_id).toBe('r1');
      state = play([responded('r1', 1, reply([text('late answer')], 'end_turn'))], state);
      expect(runOf(state, 'r1')).toMatchObject({ status: 'completed', output: 'late answer' });
    });

    it('leaves a finished run as it is', () => {
      const before = states.finished();
      expect(reduce(before, { type: 'runDeferred', now: t0, run_id: 'r1' }).commands).toEqual([]);
    });
  });

  describe('validation', () => {
    it.each([
      ['empty text', input('r2', '   '), 'InvalidInput'],
      ['oversized text', input('r2', 'x'.repeat(100_001)), 'InvalidInput'],
      ['a bad run id', input('../r2'), 'InvalidInput'],
      ['a duplicate run id', input('r1'), 'RunExists'],
      ['an unknown model', { ...input('r2'), model: 'gpt:x' }, 'InvalidInput'],
    ])('rejects %s', (_name, candidate, type) => {
      expect(validateSubmit(states.finished(), candidate)).toMatchObject({ type });
    });

    it('rejects input to a closed thread', () => {
      expect(validateSubmit(states.closed(), input('r2'))).toMatchObject({ type: 'ThreadClosed' });
    });
  });

  describe('input refused after it was taken durably', () => {
    it.each([
      ['busy under reject', { type: 'ThreadBusy' as const, message: 'busy' }, 'thread_busy'],
      ['closed', { type: 'ThreadClosed' as const, message: 'closed' }, 'thread_closed'],
      ['invalid', { type: 'InvalidInput' as const, message: 'empty' }, 'invalid_input'],
    ])('records input refused as %s as a failed run that keeps its text', (_name, refusal, reason) => {
      const before = states.modelStep();
      const transition = reduce(before, {
        type: 'inputRefused',
        now: t0 + 4,
        input: input('r2', 'not now', 'reject'),
        refusal,
      });
      expect(runOf(transition.state, 'r2')).toMatchObject({
        status: 'failed',
        status_reason: reason,
        error: refusal,
        refused_input: 'not now',
      });
      expect(kinds(transition.commands)).toEqual(['run.created', 'run.failed']);
      // The active run and the transcript are untouched.
      expect(transition.state.active).toEqual(before.active);
      expect(transition.state.transcript).toEqual(before.transcript);
    });
  });

  describe('closing', () => {
    it('cancels the active and queued runs and marks the thread closed', () => {
      const state = play([submitted('r2'), { type: 'closeRequested', now: t0 + 5 }], states.toolsStep());
      expect(state.closed).toBe(true);
      expect(runOf(state, 'r1').status).toBe('cancelled');
      expect(runOf(state, 'r2')).toMatchObject({ status: 'cancelled', status_reason: 'thread_closed' });
      expect(threadStatus(state)).toBe('closed');
    });
  });
});
