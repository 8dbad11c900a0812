export { conversationWorkflow } from './conversation-workflow';
