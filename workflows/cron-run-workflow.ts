/**
 * `cronRunWorkflow`: what a cron's Temporal Schedule starts at each fire. It hands one run to the
 * cron's thread by the `userMessage` signal, or starts a new thread with it (a stateless cron),
 * and ends: the run is an ordinary run of that thread from then on.
 */
import {
  ParentClosePolicy,
  getExternalWorkflowHandle,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { CronRunInput } from '../common/crons';
import { workflowIdFor } from '../common/thread';
import { searchAttributes } from '../common/search-attributes';
import { userMessageSignal, type SubmitInput } from '../common/messages';
import type { conversationWorkflow } from './interpreter/workflow';

export async function cronRunWorkflow(cron: CronRunInput): Promise<{ thread_id: string; run_id: string }> {
  // The schedule names each fire's workflow after its time, so a fire retried is the same run.
  const fired = workflowInfo()
    .workflowId.slice(-20)
    .replace(/[^A-Za-z0-9._-]/g, '-');
  const input: SubmitInput = { ...cron.input, run_id: `cron-${cron.cron_id.slice(0, 40)}-${fired}` };
  if (cron.thread_id !== undefined) {
    const threadWorkflowId = cron.thread_workflow_id ?? workflowIdFor(cron.thread_id);
    await getExternalWorkflowHandle(threadWorkflowId).signal(userMessageSignal, input);
    return { thread_id: cron.thread_id, run_id: input.run_id };
  }
  const threadId = uuid4();
  const { owner, scope, metadata, config } = cron.new_thread!;
  const createdAt = new Date().toISOString();
  const thread = await startChild<typeof conversationWorkflow>('conversationWorkflow', {
    workflowId: workflowIdFor(threadId, scope),
    args: [
      {
        thread_id: threadId,
        ...(owner === undefined ? {} : { owner }),
        metadata,
        config,
        created_at: createdAt,
      },
    ],
    // The thread outlives this workflow: it is the cron's output, not its child.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    memo: { metadata, created_at: createdAt },
    typedSearchAttributes: [
      { key: searchAttributes.status, value: 'idle' },
      { key: searchAttributes.owner, value: owner ?? 'local' },
      { key: searchAttributes.model, value: config.model },
    ],
  });
  await thread.signal(userMessageSignal, input);
  return { thread_id: threadId, run_id: input.run_id };
}
