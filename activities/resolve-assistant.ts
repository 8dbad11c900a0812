/**
 * `resolveAssistant`: reads an assistant's latest settings from its workflow (decision 0092) for
 * another workflow that starts an agent through it. Workflow code cannot query a workflow; this
 * activity, on Keel's task queue, does it with the worker's client.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { assistantWorkflowIdFor, getAssistantQuery, type AssistantSettings } from '../common/assistants';
import { FailureType } from '../common/failures';

export async function resolveAssistant({
  assistant_id,
}: {
  assistant_id: string;
}): Promise<AssistantSettings> {
  const notFound = () =>
    ApplicationFailure.create({
      type: FailureType.assistantNotFound,
      message: `no assistant ${assistant_id}`,
      nonRetryable: true,
    });
  const handle = Context.current().client.workflow.getHandle(assistantWorkflowIdFor(assistant_id));
  try {
    // A deleted assistant's workflow has completed; its id names nothing any more.
    if ((await handle.describe()).status.name !== 'RUNNING') throw notFound();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw notFound();
    throw error;
  }
  const assistant = await handle.query(getAssistantQuery);
  return { ...assistant.config.configurable, ...assistant.context };
}
