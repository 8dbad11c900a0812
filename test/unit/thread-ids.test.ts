import { mkdtemp, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WorkspaceViolation } from '../../activities/errors';
import { workspaceFor } from '../../activities/tools/workspace';
import { refOf, scopeFor, threadRef, unscopedRef } from '../../api/threads/thread-ref';
import { idPattern } from '../../common/limits';
import { scopeOf, threadIdOf, workflowIdFor, workspaceNameOf } from '../../common/thread';

describe('thread ids per owner (decision 0160)', () => {
  it('keeps conversation-<thread_id> for a thread without an owner scope', () => {
    expect(workflowIdFor('t1')).toBe('conversation-t1');
    expect(threadRef('t1', undefined)).toEqual(unscopedRef('t1'));
    expect(scopeFor(undefined)).toBeUndefined();
    expect([threadIdOf('conversation-t1'), scopeOf('conversation-t1')]).toEqual(['t1', undefined]);
  });

  it('gives each owner a scope of her own: stable, short, and not her name', () => {
    const alice = scopeFor('alice');
    expect(alice).toMatch(/^[0-9a-f]{16}$/);
    expect(scopeFor('alice')).toBe(alice);
    expect(scopeFor('bob')).not.toBe(alice);
    expect(threadRef('t1', 'alice').workflow_id).not.toBe(threadRef('t1', 'bob').workflow_id);
    expect(threadRef('t1', 'alice').workflow_id).not.toContain('alice');
  });

  it('reads the thread id and scope back from a scoped workflow id, a child’s included', () => {
    const scope = scopeFor('alice');
    const child = workflowIdFor('t1.toolu_1', scope);
    expect(child).toBe(`conversation-t1.toolu_1~${scope}`);
    expect([threadIdOf(child), scopeOf(child)]).toEqual(['t1.toolu_1', scope]);
    expect(refOf(child)).toEqual({ thread_id: 't1.toolu_1', workflow_id: child });
    expect(refOf('assistant-a1')).toBeUndefined();
  });

  it('never makes a scoped id that an unscoped thread id could also make', () => {
    // The separator is not a thread id character, so no caller-chosen id reaches a scoped one.
    const scopedRest = workflowIdFor('t1', scopeFor('alice')).slice('conversation-'.length);
    expect(idPattern.test(scopedRest)).toBe(false);
  });

  it("puts two owners' threads of one id in two workspaces, and the unscoped one where it was", async () => {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'keel-scoped-')));
    const unscoped = await workspaceFor(root, 't1');
    const alice = await workspaceFor(root, 't1', scopeFor('alice'));
    const bob = await workspaceFor(root, 't1', scopeFor('bob'));
    expect(unscoped).toBe(path.join(root, 't1'));
    expect(new Set([unscoped, alice, bob]).size).toBe(3);
    expect(path.basename(alice)).toBe(workspaceNameOf('t1', scopeFor('alice')));
    await expect(workspaceFor(root, 't1', '../x')).rejects.toBeInstanceOf(WorkspaceViolation);
  });
});
