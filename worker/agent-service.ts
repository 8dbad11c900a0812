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

/**
 * Whose quota an agent asked for through Nexus is admitted by (decision 0480), unless the caller
 * names one: the workflow that called the operation, as the request's link to its history event
 * names it (`temporal:///namespaces/<ns>/workflows/<id>/<run>/history`), with its namespace; a
 * request without such a link shares the one ledger of unnamed Nexus callers.
 */
export function nexusCallerOf(links: readonly nexus.Link[]): string {
  for (const link of links) {
    const parts = link.url.pathname.split('/');
    if (parts.length === 7 && parts[1] === 'namespaces' && parts[3] === 'workflows')
      return `nexus:${decodeURIComponent(parts[2]!)}/${decodeURIComponent(parts[4]!)}`;
  }
  return 'nexus:unnamed';
}

export const agentServiceHandler = nexus.serviceHandler(agentService, {
  runAgent: new WorkflowRunOperationHandler<AgentInput, AgentResult>((context, input) =>
    startWorkflow<typeof agentWorkflow>(context, 'agentWorkflow', {
      // The request id is the same on every retry of the caller's start: one agent per operation.
      workflowId: `agent-${context.requestId}`,
      args: [
        {
          ...input,
          quota_owner: input.quota_owner ?? input.report_to ?? nexusCallerOf(context.inboundLinks),
        },
      ],
    }),
  ),
});
