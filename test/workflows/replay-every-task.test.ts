import { describeConversationScenarios } from './scenarios';

// No workflow is cached: every workflow task replays the whole history first, so any
// nondeterminism in the workflow code fails these scenarios.
describeConversationScenarios('a conversation replayed from history on every task', {
  maxCachedWorkflows: 0,
});
