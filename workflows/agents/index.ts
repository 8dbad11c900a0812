export {
  AgentFailureType,
  AgentParentClosePolicy,
  agentFinishedSignal,
  agentWorkflowIdFor,
  agentWorkflowType,
  defaultAgentTaskQueue,
  threadIdOf,
  type AgentConfig,
  type AgentError,
  type AgentFinished,
  type AgentInput,
  type AgentMessage,
  type AgentOptions,
  type AgentPrompt,
  type AgentResult,
} from '../../common/agents';
export { agentResult, AgentHandle, AgentRef, getAgentRef, runAgent, startAgent } from './start-agent';
