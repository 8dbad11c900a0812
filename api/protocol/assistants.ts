/**
 * Assistants: named configurations of Keel's one graph, `agent`. Only the default assistant
 * exists so far; it is always there and takes the thread's configuration as it is.
 */
import { ApiError } from '../errors';
import { graphId } from './checkpoints';

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: { configurable: Record<string, unknown> };
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at: string;
}

/** The id of the assistant every deployment has; LangGraph names it after its graph. */
export const defaultAssistantId = 'agent';

/** 404 `assistant_not_found` unless the assistant exists. */
export function requireAssistant(assistantId: string): void {
  if (assistantId !== defaultAssistantId)
    throw new ApiError(404, 'assistant_not_found', `assistant ${assistantId} not found`);
}

export class Assistants {
  readonly #default: Assistant;

  constructor(model: string, createdAt = new Date().toISOString()) {
    this.#default = {
      assistant_id: defaultAssistantId,
      graph_id: graphId,
      name: defaultAssistantId,
      description: "Keel's durable agent: a model with workspace tools, approvals and budgets",
      config: { configurable: { model } },
      context: {},
      metadata: { created_by: 'system' },
      version: 1,
      created_at: createdAt,
      updated_at: createdAt,
    };
  }

  /** The assistant, or 404 `assistant_not_found`. */
  get(assistantId: string): Assistant {
    requireAssistant(assistantId);
    return this.#default;
  }

  search(filter: {
    graph_id?: string | undefined;
    metadata?: Record<string, unknown> | undefined;
  }): Assistant[] {
    const assistant = this.#default;
    if (filter.graph_id !== undefined && filter.graph_id !== assistant.graph_id) return [];
    const matches = Object.entries(filter.metadata ?? {}).every(
      ([key, value]) => JSON.stringify(assistant.metadata[key]) === JSON.stringify(value),
    );
    return matches ? [assistant] : [];
  }
}

/** The metadata LangGraph records on a thread that runs an assistant. */
export const runMetadataOf = (assistantId: string): Record<string, string> => ({
  graph_id: graphId,
  assistant_id: assistantId,
});
