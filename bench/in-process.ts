/**
 * The no-durability baseline: Keel's own core (the same reducer, and the same activity inputs its
 * commands carry) and real activities (scripted model, real tools) driven in this process, with
 * no Temporal: what a step costs before durability. Only the commands' execution is this file's.
 * The activities run in `MockActivityEnvironment`, which gives them an activity context
 * (heartbeats, cancellation) without a server; their streamed deltas have nowhere to go.
 */
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../activities';
import type { CallModelInput, CallModelResult, KeelActivities, RunToolInput } from '../common/activities';
import type { KeelConfig } from '../platform/config';
import type { ToolOutcome } from '../common/tools';
import type { KeelEvent } from '../common/events';
import { reduce } from '../workflows/core/reducer';
import { type ThreadState, findRun, initialState } from '../workflows/core/state';
import { modelMessages } from '../workflows/core/transcript';
import type { Command, EventInput } from '../workflows/core/transitions';

export class InProcessConversation {
  #state: ThreadState;
  readonly #activities: KeelActivities;
  readonly events: KeelEvent[] = [];
  #pending: Array<Promise<void>> = [];

  constructor(config: KeelConfig) {
    this.#activities = createActivities({ config });
    this.#state = initialState({
      thread_id: `inproc-${randomUUID()}`,
      metadata: {},
      created_at: new Date().toISOString(),
      config: { model: 'scripted:demo', approval: 'auto', approval_timeout_s: 300, max_steps: 50 },
    });
  }

  /** One turn: the user's text in, every step run, until the run is over. Returns its status. */
  async turn(text: string): Promise<string> {
    const runId = randomUUID();
    this.#dispatch({
      type: 'inputSubmitted',
      input: {
        run_id: runId,
        assistant_id: 'agent',
        content: [{ type: 'text', text }],
        multitask_strategy: 'reject',
        metadata: {},
      },
    });
    while (this.#pending.length > 0) {
      const pending = this.#pending;
      this.#pending = [];
      await Promise.all(pending);
    }
    return findRun(this.#state, runId)?.status ?? 'missing';
  }

  #dispatch(event: EventInput): void {
    const transition = reduce(this.#state, { ...event, now: Date.now() });
    this.#state = transition.state;
    for (const command of transition.commands) this.#execute(command);
  }

  #execute(command: Command): void {
    switch (command.type) {
      case 'emit':
        this.events.push(command.event);
        return;
      case 'callModel':
        this.#pending.push(this.#callModel(command));
        return;
      case 'runTool':
        this.#pending.push(this.#runTool(command));
        return;
      default:
        return;
    }
  }

  async #callModel({ run_id, step, input }: Extract<Command, { type: 'callModel' }>): Promise<void> {
    // No workflow here to ask for a long conversation's messages: they always travel inline.
    const inline = { ...input, messages: input.messages ?? modelMessages(this.#state) };
    const result = await new MockActivityEnvironment().run<
      [CallModelInput],
      CallModelResult,
      KeelActivities['callModel']
    >(this.#activities.callModel, inline);
    this.#dispatch({ type: 'modelResponded', run_id, step, result });
  }

  async #runTool({ run_id, use, input }: Extract<Command, { type: 'runTool' }>): Promise<void> {
    const outcome = await new MockActivityEnvironment().run<
      [RunToolInput],
      ToolOutcome,
      KeelActivities['runTool']
    >(this.#activities.runTool, input);
    this.#dispatch({ type: 'toolFinished', run_id, tool_use_id: use.id, outcome });
  }
}
