/**
 * What an operator sees in the Temporal Web UI and visibility: the thread's current details, and
 * the search attributes `GET /threads` and `GET /runs` filter on, written only when they change.
 */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { searchAttributes } from '../../common/search-attributes';
import { activeRunStatuses } from '../core/run-index';
import { threadStatus, type ThreadState } from '../core/state';
import { currentDetails } from '../core/views';
import type { Patches } from './patches';
import { taskDone } from '../core/task';

/** Since this patch the KeelCostUsd search attribute is written per run, not per model call. */
export const costAttributePerRunPatch = 'keel-cost-attribute-per-run';

export interface OperatorViewOptions {
  patches: Patches;
  /** A task conversation: it closes once its runs are done (task.ts). */
  task: boolean;
}

interface Written {
  status: string;
  cost: number | undefined;
  turns: number;
  model: string;
  runStatuses: string[];
}

const keyOf = (values: Written): string => JSON.stringify(values);

/**
 * The search attributes this run started with, as `publish` would key them: set by its starter
 * (the API, an agent's parent) or carried over by continue-as-new.
 */
function startedWith(): string {
  const attributes = workflowInfo().typedSearchAttributes;
  return keyOf({
    status: attributes.get(searchAttributes.status) ?? '',
    cost: undefined,
    turns: attributes.get(searchAttributes.turns) ?? 0,
    model: attributes.get(searchAttributes.model) ?? '',
    runStatuses: attributes.get(searchAttributes.runStatuses) ?? [],
  });
}

export class OperatorView {
  readonly #patches: Patches;
  readonly #task: boolean;
  #written: string;

  constructor({ patches, task }: OperatorViewOptions) {
    this.#patches = patches;
    this.#task = task;
    // Since the lean-history patch, what the run started with is not written again.
    this.#written = patches.lean ? startedWith() : '';
  }

  /**
   * Shows the thread's current details, and writes its search attributes if they changed; with
   * `visibility: false`, the details only (they cost no history event).
   */
  publish(state: ThreadState, { visibility = true }: { visibility?: boolean } = {}): void {
    setCurrentDetails(currentDetails(state));
    if (!visibility) return;
    // A task conversation whose runs are done closes in this same workflow task (workflow.ts):
    // visibility gets the closed thread, once, instead of an idle one first.
    if (this.#patches.lean && this.#task && taskDone(state) && !state.closed) return;
    const values = {
      status: threadStatus(state),
      cost: state.usage.cost_usd,
      turns: state.totals.runs,
      model: state.thread.config.model,
      runStatuses: activeRunStatuses(state),
    };
    // Cost changes with every model call; it is written with the next change of the others (a
    // run starting or ending), so a step costs no visibility write. Current details show it live.
    // Histories from before this wrote it on every change, and keep doing so on replay.
    const perRun = this.#patches.folded(costAttributePerRunPatch);
    const key = keyOf(perRun ? { ...values, cost: undefined } : values);
    if (key === this.#written) return;
    this.#written = key;
    upsertSearchAttributes([
      { key: searchAttributes.status, value: values.status },
      { key: searchAttributes.costUsd, value: values.cost },
      { key: searchAttributes.turns, value: values.turns },
      { key: searchAttributes.model, value: values.model },
      { key: searchAttributes.runStatuses, value: values.runStatuses },
    ]);
  }
}
