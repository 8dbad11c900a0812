export { conversationWorkflow } from './conversation-workflow';
export { assistantWorkflow } from './assistant-workflow';
export { cronRunWorkflow } from './cron-run-workflow';
