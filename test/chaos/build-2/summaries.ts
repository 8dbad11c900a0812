/**
 * Build 2 of the workflow code, for the deploy test: the real summaries, plus a new step in the
 * agent loop — before every model call the workflow records which build runs it (`upsertMemo`, a
 * command build 1 never issued) — guarded by `patched()` as docs/replay-and-patching.md says, so
 * histories written by build 1 replay unchanged and move over at their next model call.
 */
import { patched, upsertMemo } from '@temporalio/workflow';
import { summarizeModelCall as summarizeModelCallBuild1 } from '../../../common/summaries';

// Everything else as build 1 has it; this module's own summarizeModelCall wins over the star.
export * from '../../../common/summaries';

export const build2Patch = 'keel-test-build-2-step';

export function summarizeModelCall(model: string, turn: number, step: number): string {
  if (patched(build2Patch)) upsertMemo({ keel_build: 2 });
  return summarizeModelCallBuild1(model, turn, step);
}
