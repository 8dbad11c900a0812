/**
 * `agentWorkflow`: what the Nexus operation `keel-agents/runAgent` starts. It runs the agent as
 * its child (workflows/agents/) and returns the typed result; cancelling it (the caller's
 * cancellation, through Nexus) cancels the agent's run, and the result says `cancelled`.
 */
import { workflowInfo } from '@temporalio/workflow';
import type { AgentInput, AgentResult } from '../common/agents';
import { runAgent } from './agents/start-agent';

export async function agentWorkflow(input: AgentInput): Promise<AgentResult> {
  // The agent runs where this workflow runs: on the queue of the Keel worker that took the operation.
  return runAgent({ ...input, task_queue: input.task_queue ?? workflowInfo().taskQueue });
}
