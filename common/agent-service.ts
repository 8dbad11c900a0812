/**
 * Keel's agents as a Nexus service: a workflow in any namespace runs an agent through a Nexus
 * endpoint that targets Keel's task queue, without Keel's task queue, ids or data in its own
 * namespace. Defined once, for the Keel worker's handler and for callers.
 */
import * as nexus from 'nexus-rpc';
import type { AgentInput, AgentResult } from './agents';

export const agentServiceName = 'keel-agents';

export const agentService = nexus.service(agentServiceName, {
  /** Runs one agent to the end of its task: the same input and result as `runAgent`. */
  runAgent: nexus.operation<AgentInput, AgentResult>(),
});
