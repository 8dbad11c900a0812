/**
 * `cronRunWorkflow`: what a cron's Temporal Schedule starts at each fire. It has the run admitted
 * by its owner's quota (decision 0480), hands it to the cron's thread by the `userMessage` signal,
 * or starts a new thread with it (a stateless cron), and ends: the run is an ordinary run of that
 * thread from then on. A fire the quota refuses still reaches the thread, which records it as a
 * failed run (`quota_exceeded`) that says why and when to expect room; the next fire asks again.
 */
import {
  ParentClosePolicy,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { KeelActivities } from '../common/activities';
import type { CronRunInput } from '../common/crons';
import { quotaKey, quotaWorkflowId } from '../common/quota';
import { scopeOf, workflowIdFor } from '../common/thread';
import { searchAttributes } from '../common/search-attributes';
import { userMessageSignal, type SubmitInput } from '../common/messages';
import type { conversationWorkflow } from './interpreter/workflow';
import { cronQuotaPatch } from './interpreter/patches';

const { admitQuotaRun } = proxyActivities<KeelActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '10 seconds' },
});

/** The fire's run with its claim on the owner's quota, or marked refused; as it was before the patch. */
async function admitted(input: SubmitInput, threadWorkflowId: string, scope: string | undefined) {
  if (!patched(cronQuotaPatch)) return input;
  const admission = await admitQuotaRun({
    ledger: quotaWorkflowId(scope),
    key: quotaKey(threadWorkflowId, input.run_id),
  });
  if (!admission.admitted) {
    const { reason, retry_after_s, message } = admission;
    return { ...input, quota_refused: { reason, retry_after_s, message: `cron fire refused: ${message}` } };
  }
  return admission.quota === undefined ? input : { ...input, quota: admission.quota };
}

export async function cronRunWorkflow(cron: CronRunInput): Promise<{ thread_id: string; run_id: string }> {
  // The schedule names each fire's workflow after its time, so a fire retried is the same run.
  const fired = workflowInfo()
    .workflowId.slice(-20)
    .replace(/[^A-Za-z0-9._-]/g, '-');
  const input: SubmitInput = { ...cron.input, run_id: `cron-${cron.cron_id.slice(0, 40)}-${fired}` };
  if (cron.thread_id !== undefined) {
    const threadWorkflowId = cron.thread_workflow_id ?? workflowIdFor(cron.thread_id);
    const run = await admitted(input, threadWorkflowId, scopeOf(threadWorkflowId));
    await getExternalWorkflowHandle(threadWorkflowId).signal(userMessageSignal, run);
    return { thread_id: cron.thread_id, run_id: input.run_id };
  }
  const threadId = uuid4();
  const { owner, scope, metadata, config } = cron.new_thread!;
  const createdAt = new Date().toISOString();
  const run = await admitted(input, workflowIdFor(threadId, scope), scope);
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
  await thread.signal(userMessageSignal, run);
  return { thread_id: threadId, run_id: input.run_id };
}
