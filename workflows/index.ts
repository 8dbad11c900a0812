export { conversationWorkflow } from './conversation-workflow';
export { assistantWorkflow } from './assistant-workflow';
