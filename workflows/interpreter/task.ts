/**
 * A conversation started as another workflow's agent, on the interpreter's side: its task goes in
 * as the first run, and its result goes out to `report_to`. What the task amounts to, and when it
 * is done, is the core's (core/task.ts).
 */
import { getExternalWorkflowHandle, log } from '@temporalio/workflow';
import { agentFinishedSignal, type AgentFinished, type ConversationTask } from '../../common/agents';
import { takeSignalledInput, type HandlerHost } from './handlers';

/** Submits the task as the first run, as a signalled input would be (refused input becomes a failed run). */
export function startTask(host: HandlerHost, task: ConversationTask): void {
  takeSignalledInput(host, task.input);
}

/** Tells `report_to`, if any; a parent that is gone by now is logged, not an error. */
export async function reportTask(task: ConversationTask, finished: AgentFinished): Promise<void> {
  if (task.report_to === undefined) return;
  try {
    await getExternalWorkflowHandle(task.report_to).signal(agentFinishedSignal, finished);
  } catch (error) {
    log.warn('could not report the agent result', { report_to: task.report_to, error: String(error) });
  }
}
