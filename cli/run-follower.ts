/**
 * How `keel chat` follows a run: by polling the run, its transcript and its approvals. This is
 * the one place to swap for the SSE stream (`GET /threads/:id/runs/:run_id/stream`) once it
 * exists; the chat only sees the callbacks.
 */
import type { PendingApproval } from '../common/approvals';
import { isTerminal, type Run } from '../common/run';
import type { AssistantMessage, Message } from '../common/transcript';
import type { KeelApiClient } from './api-client';

export interface RunFollowerHandlers {
  /** An assistant message of the run entered the transcript. */
  onMessage(message: AssistantMessage): void;
  /** The run now waits for this decision; resolve once it is answered (or expired). */
  onApproval(approval: PendingApproval): Promise<void>;
  onProgress(run: Run): void;
}

export interface RunFollower {
  follow(threadId: string, runId: string, handlers: RunFollowerHandlers): Promise<Run>;
}

/** Polls every `intervalMs`. */
export class PollingRunFollower implements RunFollower {
  constructor(
    private readonly api: KeelApiClient,
    private readonly intervalMs = 250,
  ) {}

  async follow(threadId: string, runId: string, handlers: RunFollowerHandlers): Promise<Run> {
    const shown = new Set<string>();
    const asked = new Set<string>();
    const showNew = (messages: Message[]) => {
      for (const message of messages) {
        if (message.run_id !== runId || message.role !== 'assistant' || shown.has(message.id)) continue;
        shown.add(message.id);
        handlers.onMessage(message);
      }
    };
    for (;;) {
      const run = await this.api.getRun(threadId, runId);
      handlers.onProgress(run);
      showNew(await this.api.messages(threadId));
      if (isTerminal(run.status)) return run;
      if (run.status_reason === 'awaiting_approval') {
        for (const approval of await this.api.approvals(threadId)) {
          if (approval.run_id !== runId || asked.has(approval.approval_id)) continue;
          asked.add(approval.approval_id);
          await handlers.onApproval(approval);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, this.intervalMs));
    }
  }
}
