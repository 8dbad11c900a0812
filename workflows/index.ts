export { conversationWorkflow } from './interpreter/workflow';
export { assistantWorkflow } from './assistant-workflow';
export { cronRunWorkflow } from './cron-run-workflow';
export { agentWorkflow } from './agent-workflow';
export { quotaWorkflow } from './quota-workflow';
