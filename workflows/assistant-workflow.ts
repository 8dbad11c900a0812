/**
 * `assistantWorkflow`: one per assistant, id `assistant-<assistant_id>`. Its state is the
 * assistant's versions; queries read it, updates add a version, move `latest` or delete it, and
 * the memo mirrors the latest version so a search reads assistants from visibility alone.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import {
  assistantView,
  deleteAssistantUpdate,
  getAssistantQuery,
  listAssistantVersionsQuery,
  maxAssistantStateChars,
  setLatestVersionUpdate,
  updateAssistantUpdate,
  type AssistantMemo,
  type AssistantPatch,
  type AssistantState,
  type AssistantVersion,
  type NewAssistant,
} from '../common/assistants';

export interface AssistantInput extends NewAssistant {
  /** Present when this run continues an earlier one. */
  carried?: AssistantState;
}

/** The version an update makes: the latest one with `patch` applied, numbered after the newest. */
export function nextVersion(state: AssistantState, patch: AssistantPatch, now: string): AssistantVersion {
  const latest = assistantView(state);
  const newest = Math.max(...state.versions.map((version) => version.version));
  const defined = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
  return {
    assistant_id: latest.assistant_id,
    graph_id: latest.graph_id,
    name: latest.name,
    description: latest.description,
    config: latest.config,
    context: latest.context,
    metadata: latest.metadata,
    ...defined,
    version: newest + 1,
    created_at: now,
  };
}

export async function assistantWorkflow(input: AssistantInput): Promise<void> {
  let state: AssistantState = input.carried ?? {
    assistant_id: input.assistant_id,
    ...(input.owner === undefined ? {} : { owner: input.owner }),
    created_at: input.first.created_at,
    updated_at: input.first.created_at,
    versions: [input.first],
    latest: input.first.version,
  };
  let deleted = false;
  const publish = () => upsertMemo({ assistant: assistantView(state) } satisfies AssistantMemo);

  setHandler(getAssistantQuery, () => assistantView(state));
  setHandler(listAssistantVersionsQuery, () => [...state.versions].reverse());
  setHandler(
    updateAssistantUpdate,
    ({ now, ...patch }) => {
      const version = nextVersion(state, patch, now);
      state = { ...state, versions: [...state.versions, version], latest: version.version, updated_at: now };
      publish();
      return assistantView(state);
    },
    {
      validator: ({ now, ...patch }: AssistantPatch & { now: string }) => {
        const grown = JSON.stringify(state).length + JSON.stringify(nextVersion(state, patch, now)).length;
        if (grown > maxAssistantStateChars)
          throw ApplicationFailure.create({
            type: 'InvalidInput',
            message: `assistant ${state.assistant_id} would hold more than ${maxAssistantStateChars} characters of versions; create a new assistant instead`,
            nonRetryable: true,
          });
      },
    },
  );
  setHandler(
    setLatestVersionUpdate,
    ({ version, now }) => {
      state = { ...state, latest: version, updated_at: now };
      publish();
      return assistantView(state);
    },
    {
      validator: ({ version }: { version: number }) => {
        if (!state.versions.some((candidate) => candidate.version === version))
          throw ApplicationFailure.create({
            type: 'VersionNotFound',
            message: `assistant ${state.assistant_id} has no version ${version}`,
            nonRetryable: true,
          });
      },
    },
  );
  setHandler(deleteAssistantUpdate, () => {
    deleted = true;
  });

  if (input.carried === undefined) publish();
  await condition(() => deleted || workflowInfo().continueAsNewSuggested);
  await condition(allHandlersFinished);
  if (deleted) return;
  await continueAsNew<typeof assistantWorkflow>({ ...input, carried: state });
}
