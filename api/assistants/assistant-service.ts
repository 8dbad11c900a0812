/**
 * Assistants: named, versioned configurations of Keel's one graph, `agent`. The default assistant
 * (also `agent`) always exists and runs a thread as the thread is configured; every other one is
 * an `assistantWorkflow` (docs/decisions/0092-assistants-in-workflows.md): read by query, changed
 * by update, found through visibility, where its memo mirrors its latest version.
 */
import { isDeepStrictEqual } from 'node:util';
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import {
  assistantWorkflowIdFor,
  deleteAssistantUpdate,
  getAssistantQuery,
  listAssistantVersionsQuery,
  setLatestVersionUpdate,
  updateAssistantUpdate,
  type Assistant,
  type AssistantMemo,
  type AssistantPatch,
  type AssistantSettings,
  type AssistantVersion,
  type NewAssistant,
} from '../../common/assistants';
import { searchAttributes } from '../../common/search-attributes';
import type { assistantWorkflow } from '../../workflows/assistant-workflow';
import type { Owner } from '../threads/thread-ref';
import { ApiError } from '../errors';
import type { CreateAssistantBody, SearchAssistantsBody, UpdateAssistantBody } from './assistant-schemas';
import { graphId } from '../protocol/graph';

export type { Assistant } from '../../common/assistants';

/** The id of the assistant every deployment has; LangGraph names it after its graph. */
export const defaultAssistantId = 'agent';

export const assistantNotFound = (assistantId: string): ApiError =>
  new ApiError(404, 'assistant_not_found', `assistant ${assistantId} not found`);

export interface AssistantFilter {
  graph_id?: string | undefined;
  name?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** Executions read from visibility before a search gives up. */
const maxScanned = 10_000;

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export class Assistants {
  readonly #default: Assistant;

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    model: string,
    createdAt = new Date().toISOString(),
  ) {
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

  #handle(assistantId: string) {
    return this.client.workflow.getHandle<typeof assistantWorkflow>(assistantWorkflowIdFor(assistantId));
  }

  /** 404 unless the assistant's workflow runs and (when the API authenticates) is the caller's. */
  async #authorize(assistantId: string, owner: Owner) {
    try {
      const description = await this.#handle(assistantId).describe();
      if (description.status.name !== 'RUNNING') throw assistantNotFound(assistantId);
      if (owner !== undefined && description.typedSearchAttributes.get(searchAttributes.owner) !== owner)
        throw assistantNotFound(assistantId);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw assistantNotFound(assistantId);
      throw error;
    }
    return this.#handle(assistantId);
  }

  /** The assistant, or 404 `assistant_not_found`. */
  async get(assistantId: string, owner: Owner): Promise<Assistant> {
    if (assistantId === defaultAssistantId) return this.#default;
    return (await this.#authorize(assistantId, owner)).query(getAssistantQuery);
  }

  /**
   * What a run through the assistant configures: nothing for the default assistant (the thread
   * runs as it is configured), the latest version's settings for any other.
   */
  async settingsFor(assistantId: string, owner: Owner): Promise<AssistantSettings | undefined> {
    if (assistantId === defaultAssistantId) return undefined;
    const assistant = await this.get(assistantId, owner);
    return { ...assistant.config.configurable, ...assistant.context };
  }

  async create(body: CreateAssistantBody, owner: Owner, newId: () => string): Promise<Assistant> {
    requireGraph(body.graph_id);
    const assistantId = body.assistant_id ?? newId();
    const now = new Date().toISOString();
    const first: AssistantVersion = {
      assistant_id: assistantId,
      graph_id: body.graph_id,
      version: 1,
      name: body.name ?? 'Untitled',
      description: body.description ?? null,
      config: { configurable: body.config?.configurable ?? {} },
      context: body.context ?? {},
      metadata: body.metadata ?? {},
      created_at: now,
    };
    if (assistantId === defaultAssistantId) return this.#exists(assistantId, body.if_exists, owner);
    const input: NewAssistant = {
      assistant_id: assistantId,
      ...(owner === undefined ? {} : { owner }),
      first,
    };
    try {
      await this.client.workflow.start('assistantWorkflow', {
        workflowId: assistantWorkflowIdFor(assistantId),
        taskQueue: this.taskQueue,
        args: [input],
        // A deleted assistant's id can be used again.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        memo: { assistant: { ...first, updated_at: now } } satisfies AssistantMemo,
        typedSearchAttributes: [{ key: searchAttributes.owner, value: owner ?? 'local' }],
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError)
        return this.#exists(assistantId, body.if_exists, owner);
      throw error;
    }
    return { ...first, updated_at: now };
  }

  #exists(assistantId: string, ifExists: 'raise' | 'do_nothing', owner: Owner): Promise<Assistant> {
    if (ifExists === 'do_nothing') return this.get(assistantId, owner);
    throw new ApiError(409, 'assistant_exists', `assistant ${assistantId} already exists`);
  }

  /** A new version from the latest one and the changes; it becomes the latest. */
  async update(assistantId: string, patch: UpdateAssistantBody, owner: Owner): Promise<Assistant> {
    refuseDefault(assistantId, 'updated');
    if (patch.graph_id !== undefined) requireGraph(patch.graph_id);
    const handle = await this.#authorize(assistantId, owner);
    const change: AssistantPatch & { now: string } = { now: new Date().toISOString() };
    if (patch.graph_id !== undefined) change.graph_id = patch.graph_id;
    if (patch.name !== undefined) change.name = patch.name;
    if (patch.description !== undefined) change.description = patch.description;
    if (patch.config !== undefined) change.config = { configurable: patch.config.configurable ?? {} };
    if (patch.context !== undefined) change.context = patch.context;
    if (patch.metadata !== undefined) change.metadata = patch.metadata;
    return handle.executeUpdate(updateAssistantUpdate, { args: [change] });
  }

  async setLatest(assistantId: string, version: number, owner: Owner): Promise<Assistant> {
    if (assistantId === defaultAssistantId) {
      if (version === 1) return this.#default;
      throw new ApiError(404, 'version_not_found', `assistant ${assistantId} has no version ${version}`);
    }
    const handle = await this.#authorize(assistantId, owner);
    return handle.executeUpdate(setLatestVersionUpdate, {
      args: [{ version, now: new Date().toISOString() }],
    });
  }

  async versions(assistantId: string, owner: Owner, metadata: Record<string, unknown> | undefined) {
    // A version is the assistant as it was made: it has no `updated_at` (LangGraph's shape).
    const { updated_at: _updated, ...defaultVersion } = this.#default;
    const all =
      assistantId === defaultAssistantId
        ? [defaultVersion]
        : await (await this.#authorize(assistantId, owner)).query(listAssistantVersionsQuery);
    return all.filter((version) => matchesMetadata(version.metadata, metadata));
  }

  async delete(assistantId: string, owner: Owner): Promise<void> {
    refuseDefault(assistantId, 'deleted');
    const handle = await this.#authorize(assistantId, owner);
    await handle.executeUpdate(deleteAssistantUpdate);
  }

  /**
   * Assistants that match, the default one first, then the rest as visibility lists them (a
   * change shows in a search once visibility has it, typically within a second).
   */
  async search(filter: AssistantFilter, owner: Owner): Promise<Assistant[]> {
    const found = matches(this.#default, filter) ? [this.#default] : [];
    const clauses = [
      `WorkflowType = 'assistantWorkflow'`,
      `TaskQueue = ${quote(this.taskQueue)}`,
      `ExecutionStatus = 'Running'`,
      ...(owner === undefined ? [] : [`${searchAttributes.owner.name} = ${quote(owner)}`]),
    ];
    let scanned = 0;
    for await (const execution of this.client.workflow.list({ query: clauses.join(' AND ') })) {
      if (++scanned > maxScanned) break;
      const assistant = (execution.memo as Partial<AssistantMemo> | undefined)?.assistant;
      if (assistant !== undefined && matches(assistant, filter)) found.push(assistant);
    }
    return found;
  }
}

/**
 * Sorts a search's result as LangGraph's `sort_by`/`sort_order` ask: by `created_at` unless
 * another key is named, descending unless `asc` is (LangGraph's order for any key).
 */
export function sortAssistants(assistants: Assistant[], body: SearchAssistantsBody): Assistant[] {
  const key = body.sort_by ?? 'created_at';
  const order = body.sort_order ?? 'desc';
  // Ties (assistants made in the same millisecond) go by id, so pages never overlap or skip.
  const sorted = [...assistants].sort(
    (a, b) => String(a[key]).localeCompare(String(b[key])) || a.assistant_id.localeCompare(b.assistant_id),
  );
  return order === 'desc' ? sorted.reverse() : sorted;
}

function requireGraph(graph: string): void {
  if (graph !== graphId)
    throw new ApiError(
      422,
      'graph_not_found',
      `graph ${graph} not found; Keel serves one graph, "${graphId}"`,
      'graph_id',
    );
}

function refuseDefault(assistantId: string, what: 'updated' | 'deleted'): void {
  if (assistantId === defaultAssistantId)
    throw new ApiError(
      409,
      'default_assistant',
      `the default assistant ${defaultAssistantId} cannot be ${what}; create an assistant of your own`,
    );
}

const matchesMetadata = (metadata: Record<string, unknown>, wanted: Record<string, unknown> | undefined) =>
  Object.entries(wanted ?? {}).every(([key, value]) => isDeepStrictEqual(metadata[key], value));

function matches(assistant: Assistant, filter: AssistantFilter): boolean {
  if (filter.graph_id !== undefined && filter.graph_id !== assistant.graph_id) return false;
  if (filter.name !== undefined && !assistant.name.toLowerCase().includes(filter.name.toLowerCase()))
    return false;
  return matchesMetadata(assistant.metadata, filter.metadata);
}

/** The metadata LangGraph records on a thread that runs an assistant. */
export const runMetadataOf = (assistantId: string): Record<string, string> => ({
  graph_id: graphId,
  assistant_id: assistantId,
});
