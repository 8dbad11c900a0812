import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import * as messages from '../../common/messages';
import type { conversationWorkflow } from '../../workflows/interpreter/workflow';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server';
import { workerHarness } from '../helpers/worker-harness';
import { TestConversation } from '../helpers/conversation';
import { workflowIdFor } from '../../common/thread';

describe('a run submitted together with the workflow start (update-with-start)', () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  const setup = workerHarness(() => ({ OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: `${fake.url}/v1` }));
  afterAll(() => fake.close());

  it('calls the model once: the update in the first activation is not resumed a second time', async () => {
    const threadId = `t-${randomUUID()}`;
    const before = fake.requests.length;
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof conversationWorkflow>(
      'conversationWorkflow',
      {
        workflowId: workflowIdFor(threadId),
        taskQueue: setup.config.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [
          {
            thread_id: threadId,
            metadata: {},
            config: { model: 'openai:gpt-4.1', approval: 'auto', approval_timeout_s: 300, max_steps: 50 },
            created_at: new Date().toISOString(),
          },
        ],
      },
    );
    const run = await setup.client.workflow.executeUpdateWithStart(messages.submitInputUpdate, {
      args: [
        {
          run_id: randomUUID(),
          assistant_id: 'agent',
          content: [{ type: 'text', text: 'hello' }],
          multitask_strategy: 'enqueue',
          metadata: {},
        },
      ],
      startWorkflowOperation,
    });
    const conversation = TestConversation.attach(setup.client, threadId);
    const finished = await conversation.finished(run.run_id);
    expect(finished).toMatchObject({ status: 'completed', steps: 1 });
    expect(fake.requests.length - before).toBe(1);
  });
});
