/**
 * What a conversation workflow is started with. Its own module, below the workflow function, so
 * that what starts conversations (the API, child agents, agent workflows) can name it without
 * importing the workflow that imports them.
 */
import type { ConversationTask } from '../../common/agents';
import type { ThreadConfig } from '../../common/thread';
import type { Carried } from './carried';

/** What the API starts a conversation with. */
export interface NewConversation {
  thread_id: string;
  owner?: string;
  metadata: Record<string, unknown>;
  config: ThreadConfig;
  created_at: string;
  /**
   * Started as another workflow's agent (workflows/agents/): this is its first run, and the
   * thread closes once no run is left, returning what it did.
   */
  task?: ConversationTask;
}

export interface ConversationInput extends NewConversation {
  /**
   * Present when this run continues an earlier one: whole (earlier releases, a copied thread), or
   * without its long lists, which follow as further arguments (see carried.ts).
   */
  carried?: Carried;
}
