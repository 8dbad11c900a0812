/** Approvals and budgets over HTTP: each route is one query or update on the thread's workflow. */
import { Router, type Request } from 'express';
import * as messages from '../../common/messages';
import { approvalId, decisionBody, limitsBody } from '../checkpoint-schemas';
import type { Conversations } from '../conversations';
import { ApiError } from '../errors';
import { ownerOf, parseBody, pathId } from '../validate';

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

export function checkpointRoutes(conversations: Conversations): Router {
  const router = Router();

  router.get('/threads/:thread_id/approvals', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    await conversations.authorize(threadId, ownerOf(response));
    response.json(await conversations.pendingApprovals(threadId));
  });

  router.post('/threads/:thread_id/approvals/:approval_id', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const id = pathApprovalId(request, threadId);
    const body = parseBody(decisionBody, request);
    await conversations.authorize(threadId, ownerOf(response));
    const decision = {
      approval_id: id,
      decision: body.decision,
      ...(body.reason === undefined ? {} : { reason: body.reason }),
      ...(body.input === undefined ? {} : { input: body.input }),
    };
    const delivery = await conversations.decideApproval(threadId, decision);
    if (delivery.kind === 'queued') {
      // The thread could not answer now: the decision is in its history and applies when it runs.
      response.status(202).json({ ...decision, status: 'queued' });
      return;
    }
    response.json({ ...delivery.value, ...decision });
  });

  router.post('/threads/:thread_id/limits', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const body = parseBody(limitsBody, request);
    await conversations.authorize(threadId, ownerOf(response));
    const limits = {
      ...(body.max_tokens === undefined ? {} : { max_tokens: body.max_tokens }),
      ...(body.max_cost_usd === undefined ? {} : { max_cost_usd: body.max_cost_usd }),
    };
    response.json(
      await conversations.read(threadId, () =>
        conversations.handle(threadId).executeUpdate(messages.updateLimitsUpdate, { args: [limits] }),
      ),
    );
  });

  return router;
}
