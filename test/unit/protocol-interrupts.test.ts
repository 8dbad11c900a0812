/** Approvals as LangGraph interrupts: the shapes clients render, and what each resume value decides. */
import type { PendingApproval } from '../../common/approvals';
import { ApiError } from '../../api/errors';
import { decisionsFor, toInterrupt } from '../../api/protocol/interrupts';

const pending = (id: string, tool = 'bash'): PendingApproval => ({
  approval_id: id,
  run_id: 'r1',
  tool_use_id: `use-${id}`,
  tool,
  input: { command: 'echo hi' },
  requested_at: '2026-01-01T00:00:00.000Z',
  expires_at: '2026-01-01T00:05:00.000Z',
});

function refusal(run: () => unknown): { status: number; code: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, code: error.code };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('approvals as interrupts', () => {
  it("shows a pending approval in the agent inbox's human-interrupt shape", () => {
    expect(toInterrupt(pending('r1.1.1'))).toMatchObject({
      id: 'r1.1.1',
      value: {
        action_request: { action: 'bash', args: { command: 'echo hi' } },
        config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
        description: expect.stringContaining('2026-01-01T00:05:00.000Z'),
      },
      when: 'during',
      resumable: true,
    });
  });

  it.each([
    ['an inbox accept', [{ type: 'accept', args: null }], { decision: 'approve' }],
    ['a middleware approve', { decisions: [{ type: 'approve' }] }, { decision: 'approve' }],
    [
      'an inbox edit',
      { type: 'edit', args: { action: 'bash', args: { command: 'ls' } } },
      { decision: 'approve', input: { command: 'ls' } },
    ],
    [
      'a middleware edit',
      [{ type: 'edit', edited_action: { name: 'bash', args: { command: 'pwd' } } }],
      { decision: 'approve', input: { command: 'pwd' } },
    ],
    ['a response', [{ type: 'response', args: 'not now' }], { decision: 'deny', reason: 'not now' }],
    ['a middleware reject', [{ type: 'reject', message: 'no' }], { decision: 'deny', reason: 'no' }],
    ['an ignore', [{ type: 'ignore' }], { decision: 'deny', reason: expect.stringContaining('ignore') }],
  ])('decides %s', (_name, resume, decided) => {
    expect(decisionsFor(resume, [pending('r1.1.1')], 't')).toEqual([{ approval_id: 'r1.1.1', ...decided }]);
  });

  it('answers several pending approvals in order, or by interrupt id', () => {
    const two = [pending('r1.1.1'), pending('r1.1.2')];
    expect(decisionsFor([{ type: 'accept' }, { type: 'ignore' }], two, 't').map((d) => d.decision)).toEqual([
      'approve',
      'deny',
    ]);
    expect(decisionsFor({ 'r1.1.2': { type: 'accept' } }, two, 't')).toEqual([
      { approval_id: 'r1.1.2', decision: 'approve' },
    ]);
  });

  it('refuses a resume with nothing pending (409), a value that is no answer, too many answers, or an unknown id (422)', () => {
    expect(refusal(() => decisionsFor([{ type: 'accept' }], [], 't'))).toEqual({
      status: 409,
      code: 'nothing_to_resume',
    });
    const one = [pending('r1.1.1')];
    for (const bad of [
      42,
      'yes',
      [],
      [{ type: 'maybe' }],
      { type: 'response' },
      [{ type: 'edit', args: 'x' }],
    ])
      expect(refusal(() => decisionsFor(bad, one, 't'))).toEqual({ status: 422, code: 'invalid_resume' });
    expect(refusal(() => decisionsFor([{ type: 'accept' }, { type: 'accept' }], one, 't'))).toEqual({
      status: 422,
      code: 'invalid_resume',
    });
    expect(refusal(() => decisionsFor({ 'r9.9.9': { type: 'accept' } }, one, 't'))).toEqual({
      status: 422,
      code: 'invalid_resume',
    });
  });
});
