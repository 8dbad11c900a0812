/**
 * The agent state machine: `(state, event) → { state, commands }`, pure and deterministic.
 * The sequencer (sequencer.ts) moves the runs; then what follows from runs that ended is added:
 * reports, webhooks, quota settlements, push notifications. The interpreter carries out the
 * commands; tests drive this directly.
 */
import { iso } from './emit';
import { quotaSettlements } from './quota';
import { pushDeliveries } from './push';
import { unchanged } from './run-lifecycle';
import { sequence } from './sequencer';
import type { ThreadState } from './state';
import { reportsToParent } from './sub-agents';
import type { ConversationEvent, Transition } from './transitions';
import { webhookCommands } from './webhooks';

export function reduce(state: ThreadState, event: ConversationEvent): Transition {
  const touched = { ...state, updated_at: iso(event.now) };
  const settled = sequence(touched, event);
  // After everything else: a child's report to its parent, then the webhooks of runs that ended
  // and their settlements with their owner's quota; last, the A2A push notifications of runs that
  // ended, whose configs then leave the state.
  const pushed = pushDeliveries(settled.state, settled.commands);
  const after = [
    ...reportsToParent(settled.state, settled.commands),
    ...webhookCommands(settled.commands),
    ...quotaSettlements(settled.state, settled.commands),
    ...pushed.commands,
  ];
  const transition =
    after.length === 0 && pushed.state === settled.state
      ? settled
      : { state: pushed.state, commands: [...settled.commands, ...after] };
  // An event that changes nothing (a late retry, a duplicate) leaves the state exactly as it was.
  return transition.state === touched && transition.commands.length === 0 ? unchanged(state) : transition;
}
