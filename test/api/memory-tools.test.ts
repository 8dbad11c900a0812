/**
 * Memory the agent uses (issue 35, decision 0450): an assistant with `memory: true` gives the
 * model `remember`, `recall` and `forget` on its owner's `["memories"]` store namespace. With the
 * scripted model, an agent learns a preference in one thread and uses it in another; another
 * owner never recalls it; what was recalled is the tool result in the transcript; a repeat of a
 * `remember` call writes nothing a second time.
 */
import { randomUUID } from 'node:crypto';
import type { LangChainMessage, ToolMessage } from '../../api/protocol/langchain-messages';
import { loadEncryptionKeys } from '../../codec/keys';
import { memoryNamespace } from '../../platform/memory';
import { rememberTool } from '../../activities/tools/memory';
import type { ToolContext } from '../../activities/tools/registry';
import { Store } from '../../store/store';
import type { PendingApproval } from '../../common/approvals';
import { apiHarness, call, userInput } from '../helpers/api';
import { eventually } from '../helpers/temporal';

const alice = { authorization: 'Bearer alice-0123456789abcdef' };
const bob = { authorization: 'Bearer bob-0123456789abcdef0' };
type Who = typeof alice;

interface SearchAnswer {
  items: Array<{ namespace: string[]; key: string; value: { text: string }; updated_at: string }>;
}

describe('memory tools', () => {
  const harness = apiHarness(() => ({
    KEEL_API_TOKENS: 'alice:alice-0123456789abcdef,bob:bob-0123456789abcdef0',
  }));

  const assistantWith = async (who: Who, configurable: Record<string, unknown>): Promise<string> => {
    const made = await call<{ assistant_id: string }>(
      harness.base,
      'POST',
      '/assistants',
      { graph_id: 'agent', config: { configurable } },
      who,
    );
    expect(made.status).toBe(200);
    return made.body.assistant_id;
  };

  /** One run in a new thread (`thread` names it), and the tool results its transcript holds. */
  const toolResults = async (who: Who, assistantId: string, thread: string, text: string) => {
    const answered = await call<{ messages: LangChainMessage[] }>(
      harness.base,
      'POST',
      `/threads/${thread}/runs/wait?timeout_s=60`,
      { ...userInput(text), assistant_id: assistantId, if_not_exists: 'create' },
      who,
    );
    expect(answered.status).toBe(200);
    return answered.body.messages.filter((message): message is ToolMessage => message.type === 'tool');
  };

  const memoriesOf = async (who: Who) => {
    const found = await call<SearchAnswer>(
      harness.base,
      'POST',
      '/store/items/search',
      { namespace_prefix: memoryNamespace, limit: 100 },
      who,
    );
    expect(found.status).toBe(200);
    return found.body.items;
  };

  it('learns a preference in one thread and recalls it in another of the same owner, never for another owner', async () => {
    const preference = `I take my coffee black, no sugar (${randomUUID()})`;
    const aliceMemory = await assistantWith(alice, { memory: true });
    const bobMemory = await assistantWith(bob, { memory: true });

    const learned = await toolResults(alice, aliceMemory, `learn-${randomUUID()}`, `remember: ${preference}`);
    expect(learned).toHaveLength(1);
    expect(learned[0]!.content).toMatch(/^Remembered \[memory-[0-9a-f]{16}\]: /);
    const [stored] = await memoriesOf(alice);
    expect(stored).toMatchObject({ namespace: ['memories'], value: { text: preference } });

    // Another thread of the same owner: the recalled memory is the tool result in its transcript.
    const recalled = await toolResults(
      alice,
      aliceMemory,
      `use-${randomUUID()}`,
      'recall: how is the coffee taken',
    );
    expect(recalled[0]!.content).toContain(preference);
    expect(recalled[0]!.content).toContain(`[${stored!.key}]`);

    // Bob's agent, with memory on, finds nothing of Alice's; nor does his store.
    const bobs = await toolResults(bob, bobMemory, `bob-${randomUUID()}`, 'recall: coffee');
    expect(bobs[0]!.content).toBe('No memories match "coffee".');
    expect(await memoriesOf(bob)).toEqual([]);

    // Forgotten, it is recalled no more.
    const forgotten = await toolResults(
      alice,
      aliceMemory,
      `forget-${randomUUID()}`,
      `forget: ${stored!.key}`,
    );
    expect(forgotten[0]!.content).toBe(`Forgot [${stored!.key}]: ${preference}`);
    expect(await memoriesOf(alice)).toEqual([]);
  });

  it('offers no memory tools to a thread whose assistant leaves memory off', async () => {
    const plain = await assistantWith(alice, {});
    const results = await toolResults(alice, plain, `plain-${randomUUID()}`, 'remember: the sky is green');
    expect(results[0]!.status).toBe('error');
    expect(await memoriesOf(alice)).toEqual([]);
  });

  it('asks before remembering when the approval policy requires it, as for any writing tool', async () => {
    const asking = await assistantWith(alice, { memory: true, approval: 'require' });
    const thread = `ask-${randomUUID()}`;
    const started = await call(
      harness.base,
      'POST',
      `/threads/${thread}/runs`,
      { ...userInput('remember: asked first'), assistant_id: asking, if_not_exists: 'create' },
      alice,
    );
    expect(started.status).toBe(200);
    const [approval] = await eventually(async () => {
      const pending = await call<PendingApproval[]>(
        harness.base,
        'GET',
        `/threads/${thread}/approvals`,
        undefined,
        alice,
      );
      return pending.body.length === 1 ? pending.body : undefined;
    });
    expect(approval).toMatchObject({ tool: 'remember', input: { text: 'asked first' } });
    expect((await memoriesOf(alice)).map((item) => item.value.text)).not.toContain('asked first');
  });

  it('writes a memory once when the same remember call runs again (a retry after a crash)', async () => {
    const store = new Store({
      config: harness.config.store,
      keys: () => loadEncryptionKeys(harness.config.encryption),
    });
    try {
      const context = {
        idempotencyKey: `retried-${randomUUID()}:toolu_1`,
        memory: { owner: 'carol', store },
      } as unknown as ToolContext;
      const first = await rememberTool.run({ text: 'prefers tea' }, context);
      const carolsMemories = () =>
        store.search({
          owner: 'carol',
          prefix: memoryNamespace,
          filter: null,
          query: null,
          limit: 10,
          offset: 0,
          refreshTtl: false,
        });
      const [written] = await carolsMemories();
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await rememberTool.run({ text: 'prefers tea' }, context);
      expect(second).toEqual(first);
      const after = await carolsMemories();
      expect(after).toHaveLength(1);
      // Not written again: the item is the first write's, to the millisecond.
      expect(after[0]!.updated_at).toBe(written!.updated_at);
    } finally {
      await store.close();
    }
  });
});
