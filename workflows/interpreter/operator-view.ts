/**
 * What an operator sees in the Temporal Web UI and visibility: the thread's current details, and
 * the search attributes `GET /threads` and `GET /runs` filter on, written only when they change.
 */
import { patched, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { searchAttributes } from '../../common/search-attributes';
import { activeRunStatuses } from '../core/run-index';
import { threadStatus, type ThreadState } from '../core/state';
import { currentDetails } from '../core/views';

/** Since this patch the KeelCostUsd search attribute is written per run, not per model call. */
export const costAttributePerRunPatch = 'keel-cost-attribute-per-run';

export class OperatorView {
  #written = '';

  publish(state: ThreadState): void {
    setCurrentDetails(currentDetails(state));
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
    const perRun = patched(costAttributePerRunPatch);
    const key = JSON.stringify(perRun ? { ...values, cost: undefined } : values);
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
