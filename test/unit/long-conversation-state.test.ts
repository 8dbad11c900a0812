/**
 * The pieces that keep a long conversation's turns from costing more as it grows: the counted
 * transcript size (it must decide compaction exactly as serializing would, or replays diverge),
 * the carried state in parts, the pages and the revision that tells readers their copy is stale.
 */
import { appendedMessagesLimit, inlineMessagesLimit } from '../../common/activities';
import { limits } from '../../common/limits';
import type { Message } from '../../common/transcript';
import { forkAt } from '../../workflows/core/branches';
import { callModelCommand } from '../../workflows/core/model-step';
import { stepMessagesAnswer, transcriptPage } from '../../workflows/core/pages';
import { type ActiveRun, type ThreadState, transcriptRevision } from '../../workflows/core/state';
import { appendMessages, modelMessages } from '../../workflows/core/transcript';
import { carriedPartChars, joinCarried, splitCarried } from '../../workflows/interpreter/carried';
import { freshThread, t0 } from '../helpers/reducer';

/** A run at its model step. */
const active: ActiveRun = { run_id: 'r', steps: 1, step: { kind: 'model' }, started_at_ms: t0, model: 'm' };

function thread(): ThreadState {
  return freshThread({ approval_timeout_s: 60 });
}

/** `turns` runs of a question and an answer, each `chars` characters long. */
function talk(state: ThreadState, turns: number, chars: number, from = 0): ThreadState {
  let current = state;
  for (let turn = from; turn < from + turns; turn++) {
    const text = `${turn} ${'é'.repeat(chars)}`;
    current = appendMessages(current, `r${turn}`, t0 + turn, [
      { role: 'user', content: [{ type: 'text', text }] },
      { role: 'assistant', content: [{ type: 'text', text }], model: 'm', stop_reason: 'end_turn' },
    ]).state;
  }
  return current;
}

describe('a long conversation in the workflow', () => {
  it('counts the transcript as it grows, exactly as serializing it would, through compaction and forks', () => {
    let state = talk(thread(), 1, 10);
    expect(state.transcript_chars).toBe(JSON.stringify(state.transcript).length);
    state = talk(state, 40, 20_000, 1);
    expect(state.compacted_messages).toBeGreaterThan(0);
    expect(state.transcript_chars).toBe(JSON.stringify(state.transcript).length);
    const forked = forkAt(state, state.transcript[1]!.id)!;
    expect(forked.transcript_chars).toBeUndefined();
    const after = talk(forked, 1, 10, 100);
    expect(after.transcript_chars).toBe(JSON.stringify(after.transcript).length);
    // A state carried by an earlier release has no count: it is taken once.
    const { transcript_chars: _count, ...older } = state;
    expect(talk(older, 1, 10, 200).transcript_chars).toBe(
      JSON.stringify(talk(state, 1, 10, 200).transcript).length,
    );
  });

  it('sends messages inline exactly while their JSON fits in 64 KiB', () => {
    for (const chars of [1_000, 10_000, 16_370, 16_380, 16_400, 40_000]) {
      const state = talk(thread(), 2, chars);
      const command = callModelCommand(state, active, 1);
      const fits = JSON.stringify(modelMessages(state)).length <= inlineMessagesLimit;
      expect(command.type === 'callModel' && command.input.messages !== undefined).toBe(fits);
    }
  });

  it('brings, past 64 KiB, the messages from the previous answer on, when they are small', () => {
    const long = talk(thread(), 8, 5_000);
    const asked = appendMessages(long, 'r', t0, [
      { role: 'user', content: [{ type: 'text', text: 'and?' }] },
    ]).state;
    const command = callModelCommand(asked, active, 1);
    const messages = modelMessages(asked);
    if (command.type !== 'callModel') throw new Error('expected a model call');
    expect(command.input.messages).toBeUndefined();
    // The previous answer and the question after it; the worker that sent everything before holds the rest.
    expect(command.input.appended).toEqual({
      from: messages.length - 2,
      revision: transcriptRevision(asked),
      messages: messages.slice(-2),
    });
    // A tool step: the answer that asked for the tool and its result.
    const toolTurn = appendMessages(asked, 'r', t0, [
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't1', name: 'bash', input: {} }],
        model: 'm',
        stop_reason: 'tool_use',
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
    ]).state;
    const next = callModelCommand(toolTurn, active, 2);
    if (next.type !== 'callModel') throw new Error('expected a model call');
    expect(next.input.appended?.from).toBe(messages.length);
    expect(next.input.appended?.messages).toEqual(modelMessages(toolTurn).slice(-2));
    // Too large to write into the history at every step: read from the workflow instead.
    const large = appendMessages(asked, 'r', t0, [
      { role: 'assistant', content: [{ type: 'text', text: 'x' }], model: 'm', stop_reason: 'end_turn' },
      { role: 'user', content: [{ type: 'text', text: 'y'.repeat(appendedMessagesLimit) }] },
    ]).state;
    const unsent = callModelCommand(large, active, 1);
    expect(unsent.type === 'callModel' && unsent.input.appended === undefined).toBe(true);
    // Inline: everything travels, nothing more.
    const short = callModelCommand(talk(thread(), 2, 10), active, 1);
    expect(short.type === 'callModel' && short.input.appended === undefined).toBe(true);
  });

  it('carries a 1 MB state in parts under 512 KiB each, and gets the same state back', () => {
    const state = talk(thread(), 30, 18_000);
    expect(JSON.stringify(state.transcript).length).toBeGreaterThan(limits.transcriptChars * 0.6);
    const stream = {
      log: Array.from({ length: 300 }, (_, index) => ({
        topic: 'events',
        data: `e${index}`.repeat(300),
        offset: 0,
      })),
      base_offset: 7,
      publisher_sequences: {},
      publisher_last_seen: {},
    };
    const { carried, parts } = splitCarried(state, stream);
    expect(parts.length).toBe(carried.parts);
    for (const part of [carried, ...parts])
      expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThan(
        Math.min(512 * 1024, carriedPartChars * 3 + 1_000),
      );
    const joined = JSON.parse(JSON.stringify(joinCarried(carried, parts))) as unknown;
    expect(joined).toEqual(JSON.parse(JSON.stringify({ state, stream })));
    expect(() => joinCarried(carried, parts.slice(1))).toThrow(/parts/);
  });

  it('answers pages that add up to the whole, under a revision that changes only when the front does', () => {
    let state = talk(thread(), 12, 5_000);
    const pages: Message[] = [];
    let after = 0;
    for (;;) {
      const page = transcriptPage(state, { after, max_chars: 30_000 });
      expect(JSON.stringify(page.messages).length).toBeLessThan(30_000 + 11_000);
      pages.push(...page.messages);
      if (!page.more) break;
      after = Number(page.messages.at(-1)!.id.slice(1));
    }
    expect(pages).toEqual(state.transcript);
    const step = stepMessagesAnswer(state, { from: 3, max_chars: 1 });
    expect(step).toMatchObject({ total: modelMessages(state).length, messages: [modelMessages(state)[3]] });
    const revision = transcriptRevision(state);
    state = talk(state, 1, 10, 50);
    expect(transcriptRevision(state)).toBe(revision);
    expect(transcriptRevision(forkAt(state, state.transcript[1]!.id)!)).not.toBe(revision);
    expect(transcriptRevision(talk(state, 40, 20_000, 60))).not.toBe(revision);
  });
});
