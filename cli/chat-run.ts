/**
 * One run of `keel chat` on the screen: streamed text on a `keel › ` line, a line per tool, the
 * approval prompt, notes. Every tool call gets one verdict: it ran (`⚙`, and `✗` if it failed),
 * or the answer to its approval, or `(not run)` with the reason.
 */
import type { Run } from '../common/run';
import { resultLines, stoppedLine, toolLines } from './chat-history';
import type { ChatScreen } from './chat-screen';
import { toolCallLine } from './tool-lines';
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
  const { style } = screen;
  const started = new Map<string, { name: string; input: Record<string, unknown> }>();
  /** The call whose line was printed last: a result of another (parallel calls) names its call again. */
  let lastCall: string | undefined;
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
          if (block.type === 'text' && !streamed && block.text !== '')
            screen.line(`${style.keel('keel ›')} ${block.text}`);
          if (block.type === 'tool_use' && !started.has(block.id) && !settled.has(block.id))
            screen.line(`${toolLines(style, block.name, block.input).join('\n')} ${style.dim('(not run)')}`);
        }
        // The partial answer of a stopped run stays on screen, marked.
        if (message.stopped === true) return screen.line(stoppedLine(style));
        busy('thinking…');
      },
      onToolStarted(tool) {
        started.set(tool.tool_use_id, tool);
        lastCall = tool.tool_use_id;
        for (const line of toolLines(style, tool.name, tool.input)) screen.line(line);
        busy(`running ${tool.name}…`);
      },
      onToolCompleted(tool) {
        const call = started.get(tool.tool_use_id);
        if (call !== undefined) {
          if (lastCall !== tool.tool_use_id)
            screen.line(`  ↳ ${style.tool(toolCallLine(call.name, call.input))}`);
          lastCall = undefined;
          for (const line of resultLines(style, tool.content, tool.is_error)) screen.line(line);
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
