/**
 * One run of `keel chat` on the screen: streamed text on a `keel › ` line, a line per tool, the
 * approval prompt, notes. Every tool call gets one verdict: it ran (`⚙`, and `✗` if it failed),
 * or the answer to its approval, or `(not run)` with the reason.
 */
import type { Run } from '../common/run';
import type { ChatScreen } from './chat-screen';
import type { ApprovalRequest, RunFollower } from './run-follower';

export type Answer = 'approve' | 'deny' | 'expired' | 'interrupted';

export const money = (usd: number): string => `$${usd.toFixed(4)}`;
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

interface RunScreen {
  screen: ChatScreen;
  ask: (approval: ApprovalRequest) => Promise<Answer>;
  decide: (approvalId: string, decision: 'approve' | 'deny') => Promise<unknown>;
  cancel: () => Promise<unknown>;
}

/** Shows one run as it happens, until it ends; resolves with the run as it ended. */
export async function followRun(
  follower: RunFollower,
  threadId: string,
  runId: string,
  { screen, ask, decide, cancel }: RunScreen,
): Promise<Run> {
  let activity = 'thinking…';
  const busy = (what: string) => {
    activity = what;
    screen.busy(what);
  };
  const started = new Set<string>();
  /** Calls whose verdict is on the screen although they never started. */
  const settled = new Set<string>();
  /** Per tool name: approvals answered here with no run (denied, expired) whose result is still to come. */
  const unrun = new Map<string, number>();
  busy('thinking…');
  try {
    return await follower.follow(threadId, runId, {
      onProgress(current) {
        if (current.status === 'deferred') busy('waiting for the thread…');
      },
      onDelta(text) {
        screen.text(text);
      },
      onRetry(attempt) {
        screen.line(
          `  ↻ the model call failed midway and was retried (attempt ${attempt}); its answer starts over:`,
        );
      },
      onMessage(message, streamed) {
        screen.endText();
        for (const block of message.content) {
          if (block.type === 'text' && !streamed && block.text !== '') screen.line(`keel › ${block.text}`);
          if (block.type === 'tool_use' && !started.has(block.id) && !settled.has(block.id))
            screen.line(`  ⚙ ${block.name} ${JSON.stringify(block.input)} (not run)`);
        }
        busy('thinking…');
      },
      onToolStarted(tool) {
        started.add(tool.tool_use_id);
        screen.line(`  ⚙ ${tool.name} ${JSON.stringify(tool.input)}`);
        busy(`running ${tool.name}…`);
      },
      onToolCompleted(tool) {
        if (started.has(tool.tool_use_id)) {
          if (tool.is_error) screen.line(`  ✗ ${tool.name} failed`);
        } else {
          settled.add(tool.tool_use_id);
          const answered = unrun.get(tool.name) ?? 0;
          if (answered > 0) unrun.set(tool.name, answered - 1);
          else screen.line(`  ⚙ ${tool.name} not run: ${tool.content.split('\n')[0] ?? ''}`);
        }
        busy('thinking…');
      },
      onUsage(usage) {
        screen.setCost(` ${money(usage.cost_usd)}`);
      },
      async onApproval(approval) {
        screen.settle();
        let answer: Answer;
        try {
          answer = await ask(approval);
        } catch (error) {
          await cancel().catch(() => undefined);
          throw error;
        }
        if (answer === 'approve' || answer === 'deny') {
          try {
            await decide(approval.approval_id, answer);
            screen.line(answer === 'approve' ? '  approved' : '  denied');
            if (answer === 'deny') unrun.set(approval.tool, (unrun.get(approval.tool) ?? 0) + 1);
          } catch (error) {
            screen.line(`  ${messageOf(error)}`);
          }
        } else if (answer === 'expired') unrun.set(approval.tool, (unrun.get(approval.tool) ?? 0) + 1);
        busy('thinking…');
      },
      onNotice(text) {
        screen.line(`  (${text})`);
        busy(activity);
      },
      onReconnecting() {
        screen.busy(`reconnecting…`);
      },
    });
  } finally {
    screen.settle();
  }
}
