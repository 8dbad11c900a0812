/** Approvals and limits (budgets) over HTTP: each route is one query or update on the thread's workflow. */
import { Router, type Request } from 'express';
import { z } from 'zod';
import { approvalId, decisionBody, limitsBody } from './thread-schemas';
import { operation, route } from '../contract';
import type { RunService } from '../runs/run-service';
import type { ThreadService } from './thread-service';
import { ApiError } from '../errors';
import { decidedApproval, pendingApproval, thread } from '../response-schemas';
import { threadPath } from '../schemas';
import { ownerOf, pathId } from '../validate';

export const listApprovals = operation({
  method: 'get',
  path: '/threads/{thread_id}/approvals',
  summary: 'Pending approvals',
  params: threadPath,
  responses: { 200: { description: 'Pending approvals', schema: z.array(pendingApproval) } },
  errors: [503],
});

export const decideApproval = operation({
  method: 'post',
  path: '/threads/{thread_id}/approvals/{approval_id}',
  summary:
    'Approve or deny; 404 approval_not_found for unknown ids, 409 approval_not_pending for decided ones',
  params: { ...threadPath, approval_id: approvalId },
  body: decisionBody,
  responses: {
    200: { description: 'The decided approval', schema: decidedApproval },
    202: {
      description: 'The decision is queued: no worker holds the thread right now',
      schema: decidedApproval,
    },
  },
  errors: [409, 503],
});

export const updateLimits = operation({
  method: 'post',
  path: '/threads/{thread_id}/limits',
  summary: 'Raise or lower the budgets (null removes one, an absent key leaves it)',
  params: threadPath,
  body: limitsBody,
  responses: { 200: { description: 'The thread', schema: thread } },
  errors: [409, 503],
});

export const approvalOperations = [listApprovals, decideApproval, updateLimits];

/** An id that cannot name an approval answers 404, like any other unknown id. */
function pathApprovalId(request: Request, threadId: string): string {
  const parsed = approvalId.safeParse(request.params.approval_id);
  if (!parsed.success)
    throw new ApiError(
      404,
      'approval_not_found',
      `approval ${String(request.params.approval_id)} not found on thread ${threadId}`,
    );
  return parsed.data;
}

export function approvalRoutes(threads: ThreadService, runs: RunService): Router {
  const router = Router();

  route(router, listApprovals, async (request, response) => {
    const thread = await threads.authorize(pathId(request, 'thread_id'), ownerOf(response));
    response.json(await threads.pendingApprovals(thread));
  });

  route(router, decideApproval, async (request, response, { body }) => {
    const threadId = pathId(request, 'thread_id');
    const id = pathApprovalId(request, threadId);
    const thread = await threads.authorize(threadId, ownerOf(response));
    const decision = {
      approval_id: id,
      decision: body.decision,
      ...(body.reason === undefined ? {} : { reason: body.reason }),
      ...(body.decision !== 'approve' || body.input === undefined ? {} : { input: body.input }),
    };
    const delivery = await runs.decideApproval(thread, decision);
    if (delivery.kind === 'queued') {
      // The thread could not answer now: the decision is in its history and applies when it runs.
      response.status(202).json({ ...decision, status: 'queued' });
      return;
    }
    response.json({ ...delivery.value, ...decision });
  });

  route(router, updateLimits, async (request, response, { body }) => {
    const thread = await threads.authorize(pathId(request, 'thread_id'), ownerOf(response));
    const limits = {
      ...(body.max_tokens === undefined ? {} : { max_tokens: body.max_tokens }),
      ...(body.max_cost_usd === undefined ? {} : { max_cost_usd: body.max_cost_usd }),
    };
    response.json(await threads.updateLimits(thread, limits));
  });

  return router;
}
