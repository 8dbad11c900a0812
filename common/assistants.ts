/**
 * Assistants: named, versioned configurations of Keel's one graph, each held by its own
 * long-lived `assistantWorkflow` (docs/decisions/0092-assistants-in-workflows.md). The messages
 * of that workflow are defined here, once.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { ApprovalMode, ToolRule } from './thread';

/**
 * What an assistant configures, LangGraph's `config.configurable` for Keel's graph: every key is
 * optional and an absent one takes the deployment's default when a run uses the assistant.
 */
export interface AssistantSettings {
  model?: string | undefined;
  system?: string | undefined;
  approval?: ApprovalMode | undefined;
  approval_timeout_s?: number | undefined;
  tool_rules?: Record<string, ToolRule> | undefined;
  max_tokens?: number | undefined;
  max_cost_usd?: number | undefined;
  max_steps?: number | undefined;
  memory?: boolean | undefined;
}

/** One version of an assistant, as `POST /assistants/:id/versions` lists it. */
export interface AssistantVersion {
  assistant_id: string;
  graph_id: string;
  version: number;
  name: string;
  description: string | null;
  config: { configurable: AssistantSettings };
  context: AssistantSettings;
  metadata: Record<string, unknown>;
  created_at: string;
}

/** An assistant as LangGraph's API shows it: its latest version, plus when it was made and changed. */
export interface Assistant extends Omit<AssistantVersion, 'created_at'> {
  created_at: string;
  updated_at: string;
}

/** The fields an update may change; what it leaves out is carried over from the latest version. */
export interface AssistantPatch {
  graph_id?: string;
  name?: string;
  description?: string | null;
  config?: { configurable: AssistantSettings };
  context?: AssistantSettings;
  metadata?: Record<string, unknown>;
}

/** What the API starts an assistant's workflow with. */
export interface NewAssistant {
  assistant_id: string;
  owner?: string;
  first: AssistantVersion;
}

/** What a continued assistant workflow carries over. */
export interface AssistantState {
  assistant_id: string;
  owner?: string;
  created_at: string;
  updated_at: string;
  versions: AssistantVersion[];
  /** The version runs use (`POST /assistants/:id/latest` moves it). */
  latest: number;
}

/** The memo an assistant's workflow keeps current, so a search reads it from visibility. */
export interface AssistantMemo {
  assistant: Assistant;
}

export const assistantWorkflowIdFor = (assistantId: string): string => `assistant-${assistantId}`;

/** An assistant's whole state may not outgrow this (JSON characters): Temporal refuses 2 MiB payloads. */
export const maxAssistantStateChars = 1_000_000;

/** Adds a version made from the latest one and `patch`; it becomes the latest. */
export const updateAssistantUpdate = defineUpdate<Assistant, [AssistantPatch & { now: string }]>(
  'updateAssistant',
);
/** Makes an existing version the latest; the validator rejects an unknown version. */
export const setLatestVersionUpdate = defineUpdate<Assistant, [{ version: number; now: string }]>(
  'setLatestVersion',
);
/** Deletes the assistant: its workflow completes, and the id is free again. */
export const deleteAssistantUpdate = defineUpdate<void, []>('deleteAssistant');
export const getAssistantQuery = defineQuery<Assistant>('getAssistant');
export const listAssistantVersionsQuery = defineQuery<AssistantVersion[]>('listAssistantVersions');

/** The assistant a state shows: its latest version with the assistant's own dates. */
export function assistantView(state: AssistantState): Assistant {
  const latest = state.versions.find((version) => version.version === state.latest) ?? state.versions.at(-1)!;
  return { ...latest, created_at: state.created_at, updated_at: state.updated_at };
}
