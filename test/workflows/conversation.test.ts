import { describeConversationScenarios } from './scenarios';

describeConversationScenarios('a conversation on a real Temporal server');
