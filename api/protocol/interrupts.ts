/**
 * Keel's approvals as LangGraph interrupts (docs/decisions/0095-approvals-as-interrupts.md): a
 * pending approval is an interrupt in the human-interrupt shape LangGraph's agent inbox and chat
 * UI render, and `command.resume` answers it. Pure.
 */
import { z } from 'zod';
import type { DecideApprovalInput, PendingApproval } from '../../common/approvals';
import { ApiError } from '../errors';
import { toolsNode } from './graph';

/** What a human is asked, as LangGraph's `HumanInterrupt`. */
export interface HumanInterrupt {
  action_request: { action: string; args: Record<string, unknown> };
  config: { allow_ignore: boolean; allow_respond: boolean; allow_edit: boolean; allow_accept: boolean };
  description: string;
}

export interface Interrupt {
  id: string;
  value: HumanInterrupt;
  when: 'during';
  resumable: true;
  ns: string[];
}

export function toInterrupt(approval: PendingApproval): Interrupt {
  return {
    id: approval.approval_id,
    value: {
      action_request: { action: approval.tool, args: approval.input },
      config: { allow_ignore: true, allow_respond: true, allow_edit: true, allow_accept: true },
      description: `Keel asks before running ${approval.tool} (approval ${approval.approval_id}); without an answer by ${approval.expires_at} the call is not run. Accept, edit the arguments, or respond with why not.`,
    },
    when: 'during',
    resumable: true,
    ns: [`${toolsNode}:${approval.approval_id}`],
  };
}

/**
 * One answer, in the agent inbox's `HumanResponse` shape (`accept`, `edit` with the action's new
 * args, `response` with a text, `ignore`) or the HITL middleware's decision shape (`approve`,
 * `edit` with `edited_action`, `reject` with a `message`).
 */
const humanResponse = z.discriminatedUnion('type', [
  z.object({ type: z.literal('accept'), args: z.unknown().optional() }),
  z.object({
    type: z.literal('edit'),
    args: z.object({ action: z.string().optional(), args: z.record(z.string(), z.unknown()) }),
  }),
  z.object({ type: z.literal('response'), args: z.string().max(2_000) }),
  z.object({ type: z.literal('ignore'), args: z.unknown().optional() }),
  z.object({ type: z.literal('approve') }),
  z.object({
    type: z.literal('reject'),
    message: z.string().max(2_000).optional(),
  }),
]);
const middlewareEdit = z.object({
  type: z.literal('edit'),
  edited_action: z.object({ name: z.string().optional(), args: z.record(z.string(), z.unknown()) }),
});
const answer = z.union([middlewareEdit, humanResponse]);
type Answer = z.infer<typeof answer>;

/** `command` on a run: only `resume` means something for Keel's graph. */
export const runCommand = z
  .strictObject(
    { resume: z.unknown() },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? 'command.update and command.goto are not supported: Keel resumes approvals only'
          : undefined,
    },
  )
  .refine((command) => command.resume !== undefined, 'command needs "resume": Keel resumes approvals only')
  .meta({ required: ['resume'] });
export type RunCommand = z.infer<typeof runCommand>;

const resumeValue = z.union([
  answer,
  z.array(answer).min(1),
  z.object({ decisions: z.array(answer).min(1) }),
  z.record(z.string(), z.union([answer, z.array(answer).length(1)])),
]);

function decisionOf(approvalId: string, given: Answer): DecideApprovalInput {
  switch (given.type) {
    case 'accept':
    case 'approve':
      return { approval_id: approvalId, decision: 'approve' };
    case 'edit':
      return {
        approval_id: approvalId,
        decision: 'approve',
        input: 'edited_action' in given ? given.edited_action.args : given.args.args,
      };
    case 'response':
      return { approval_id: approvalId, decision: 'deny', reason: given.args };
    case 'reject':
      return {
        approval_id: approvalId,
        decision: 'deny',
        ...(given.message === undefined ? {} : { reason: given.message }),
      };
    case 'ignore':
      return { approval_id: approvalId, decision: 'deny', reason: 'The user chose to ignore this call.' };
  }
}

/**
 * The decisions a `resume` value stands for: answers in order for the pending approvals (oldest
 * first), or keyed by interrupt id. 409 `nothing_to_resume` with none pending; 422 for a value
 * that is not an answer or names an interrupt that is not pending.
 */
export function decisionsFor(
  resume: unknown,
  pending: PendingApproval[],
  threadId: string,
): DecideApprovalInput[] {
  if (pending.length === 0)
    throw new ApiError(
      409,
      'nothing_to_resume',
      `thread ${threadId} has no pending interrupt to resume`,
      'command.resume',
    );
  const parsed = resumeValue.safeParse(resume);
  if (!parsed.success)
    throw new ApiError(
      422,
      'invalid_resume',
      'command.resume must be an answer ({"type": "accept" | "edit" | "response" | "ignore", "args": …}), a list of them, or a map from interrupt id to one',
      'command.resume',
    );
  const value = parsed.data;
  const inOrder = Array.isArray(value)
    ? value
    : 'decisions' in value && Array.isArray(value.decisions)
      ? value.decisions
      : 'type' in value && typeof value.type === 'string'
        ? [value]
        : undefined;
  if (inOrder !== undefined) {
    if (inOrder.length > pending.length)
      throw new ApiError(
        422,
        'invalid_resume',
        `command.resume has ${inOrder.length} answers for ${pending.length} pending interrupts`,
        'command.resume',
      );
    return inOrder.map((given, index) => decisionOf(pending[index]!.approval_id, given));
  }
  return Object.entries(value as Record<string, Answer | Answer[]>).map(([id, given]) => {
    if (!pending.some((approval) => approval.approval_id === id))
      throw new ApiError(
        422,
        'invalid_resume',
        `interrupt ${id} is not pending on thread ${threadId}`,
        'command.resume',
      );
    return decisionOf(id, Array.isArray(given) ? given[0]! : given);
  });
}
