/**
 * The handler of Keel's Nexus service (common/agent-service.ts), registered on every Keel worker:
 * `runAgent` is a workflow-run operation backed by `agentWorkflow` on the worker's own task queue.
 * Nexus carries its completion back to the caller, and a caller's cancel to the workflow.
 */
import * as nexus from 'nexus-rpc';
import { startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import type { AgentInput, AgentResult } from '../common/agents';
import { agentService } from '../common/agent-service';
import type { agentWorkflow } from '../workflows/agent-workflow';

export const agentServiceHandler = nexus.serviceHandler(agentService, {
  runAgent: new WorkflowRunOperationHandler<AgentInput, AgentResult>((context, input) =>
    startWorkflow<typeof agentWorkflow>(context, 'agentWorkflow', {
      // The request id is the same on every retry of the caller's start: one agent per operation.
      workflowId: `agent-${context.requestId}`,
      args: [input],
    }),
  ),
});
