/** A run as an MCP task and an assistant as an MCP tool (decision 0430): the pure translations. */
import type { Assistant } from '../../common/assistants';
import type { PendingApproval } from '../../common/approvals';
import type { Run } from '../../common/run';
import { zeroUsage } from '../../common/usage';
import { agentTools } from '../../api/mcp/agent-tools';
import {
  extensionTaskOf,
  runOfTaskId,
  taskIdOf,
  taskOf,
  taskPageOf,
  toolResultOf,
} from '../../api/mcp/run-tasks';

const run = (fields: Partial<Run>): Run =>
  ({
    run_id: 'run-1',
    thread_id: 'thread-1',
    assistant_id: 'agent',
    status: 'running',
    multitask_strategy: 'enqueue',
    metadata: {},
    created_at: '2026-11-27T20:00:00.000Z',
    updated_at: '2026-11-27T20:00:01.000Z',
    started_at: '2026-11-27T20:00:00.500Z',
    steps: 1,
    usage: zeroUsage,
    model: 'scripted:demo',
    ...fields,
  }) as Run;

const approval: PendingApproval = {
  approval_id: 'run-1.1.1',
  run_id: 'run-1',
  tool_use_id: 'toolu_1',
  tool: 'bash',
  input: { command: 'echo hi' },
  requested_at: '2026-11-27T20:00:01.000Z',
  expires_at: '2026-11-27T20:05:01.000Z',
};

const assistant = (assistant_id: string, name: string): Assistant => ({
  assistant_id,
  graph_id: 'agent',
  name,
  description: null,
  config: { configurable: {} },
  context: {},
  metadata: {},
  version: 1,
  created_at: '2026-11-27T20:00:00.000Z',
  updated_at: '2026-11-27T20:00:00.000Z',
});

describe('a run as an MCP task', () => {
  it('names the run and its thread in the task id, and reads them back', () => {
    expect(taskIdOf({ thread_id: 'thread-1', run_id: 'run-1' })).toBe('thread-1:run-1');
    expect(runOfTaskId('thread-1:run-1')).toEqual({ thread_id: 'thread-1', run_id: 'run-1' });
  });

  it.each(['', 'thread-1', 'a:b:c', ':run', 'thread 1:run', '../x:run', `${'x'.repeat(300)}:run`])(
    'finds no run in the task id %j',
    (taskId) => {
      expect(runOfTaskId(taskId)).toBeUndefined();
    },
  );

  it.each([
    ['queued', undefined, 'working'],
    ['running', undefined, 'working'],
    ['deferred', undefined, 'working'],
    ['running', 'awaiting_approval', 'input_required'],
    ['completed', undefined, 'completed'],
    ['failed', 'budget_exceeded', 'failed'],
    ['cancelled', 'cancelled_by_user', 'cancelled'],
  ] as const)('shows a %s run (%s) as %s', (status, reason, taskStatus) => {
    const task = taskOf(run({ status, ...(reason === undefined ? {} : { status_reason: reason }) }));
    expect(task.status).toBe(taskStatus);
    expect(task.ttl).toBeNull();
  });

  it('carries one elicitation form per pending approval of its own run while it waits', () => {
    const other = { ...approval, approval_id: 'run-2.1.1', run_id: 'run-2' };
    const task = taskOf(run({ status_reason: 'awaiting_approval' }), [approval, other]);
    expect(task.statusMessage).toContain('bash: {"command":"echo hi"}');
    expect(Object.keys(task.inputRequests ?? {})).toEqual(['run-1.1.1']);
    expect(task.inputRequests?.['run-1.1.1']).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', requestedSchema: { required: ['decision'] } },
    });
  });

  it("answers a completed run's final text, and a failed one as an error naming why", () => {
    const done = toolResultOf(run({ status: 'completed', ended_at: 'x', output: 'the answer' }));
    expect(done).toEqual({
      content: [{ type: 'text', text: 'the answer' }],
      _meta: { 'keel/thread_id': 'thread-1', 'keel/run_id': 'run-1' },
    });
    const failed = toolResultOf(
      run({ status: 'failed', ended_at: 'x', error: { type: 'BudgetExceeded', message: 'over budget' } }),
    );
    expect(failed).toMatchObject({ isError: true, content: [{ text: 'the run failed: over budget' }] });
  });
});

describe('a run as a task of the 2026-07-28 Tasks extension', () => {
  it('carries ttlMs and pollIntervalMs, and the input requests while it waits', () => {
    const task = extensionTaskOf(run({ status_reason: 'awaiting_approval' }), [approval]);
    expect(task).toMatchObject({ taskId: 'thread-1:run-1', status: 'input_required', ttlMs: null });
    expect(task.pollIntervalMs).toBe(1_000);
    expect(task).not.toHaveProperty('ttl');
    expect(task).not.toHaveProperty('pollInterval');
    expect(Object.keys(task.inputRequests ?? {})).toEqual(['run-1.1.1']);
  });

  it("inlines a completed run's tool result, a failed run's error, and nothing for a cancelled one", () => {
    const done = extensionTaskOf(run({ status: 'completed', ended_at: 'x', output: 'the answer' }));
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'the answer' }] },
    });
    expect(done).not.toHaveProperty('pollIntervalMs');
    const failed = extensionTaskOf(
      run({
        status: 'failed',
        ended_at: 'x',
        status_reason: 'budget_exceeded',
        error: { type: 'BudgetExceeded', message: 'boom' },
      }),
    );
    expect(failed).toMatchObject({ status: 'failed', error: { code: -32603, message: 'boom' } });
    const cancelled = extensionTaskOf(run({ status: 'cancelled', ended_at: 'x' }));
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled).not.toHaveProperty('result');
    expect(cancelled).not.toHaveProperty('error');
  });
});

describe('tasks/list (2025-11-25)', () => {
  const runs = Array.from({ length: 5 }, (_, i) =>
    run({
      run_id: `run-${i}`,
      created_at: `2026-11-27T20:00:0${i}.000Z`,
      metadata: i === 2 ? {} : { source: 'mcp' },
    }),
  );

  it('pages the runs made over MCP, newest first, with a cursor until the last page', () => {
    const first = taskPageOf(runs, undefined, 2)!;
    expect(first.tasks.map(({ taskId }) => taskId)).toEqual(['thread-1:run-4', 'thread-1:run-3']);
    expect(first.nextCursor).toBe('2');
    const last = taskPageOf(runs, first.nextCursor, 2)!;
    expect(last.tasks.map(({ taskId }) => taskId)).toEqual(['thread-1:run-1', 'thread-1:run-0']);
    expect(last).not.toHaveProperty('nextCursor');
  });

  it.each(['', 'x', '-2', '1.5'])('refuses the cursor %j, which Keel never gives', (cursor) => {
    expect(taskPageOf(runs, cursor)).toBeUndefined();
  });
});

describe('assistants as MCP tools', () => {
  it('names a tool after its assistant when the name is a unique tool name, else after its id', () => {
    const tools = agentTools([
      assistant('agent', 'agent'),
      assistant('a1', 'reviewer'),
      assistant('a2', 'Code Reviewer'),
      assistant('a3', 'twin'),
      assistant('a4', 'twin'),
      assistant('a5', 'a1'),
    ]);
    expect(tools.map(({ name }) => name)).toEqual(['agent', 'reviewer', 'a2', 'a3', 'a4', 'a5']);
  });
});
