export { conversationWorkflow } from './interpreter/workflow';
