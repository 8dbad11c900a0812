/**
 * `spawn_agent`, as the model is told about it. The conversation workflow carries it out itself
 * (a child workflow, not an activity), so `run` is only reached if a workflow ever sends it here.
 */
import { z } from 'zod';
import { defaultChildTimeoutS, spawnAgentToolName } from '../../common/children';
import { defineTool } from './registry';

export const spawnAgentTool = defineTool({
  name: spawnAgentToolName,
  description:
    'Start a sub-agent: a separate conversation that works on `task` with the same tools and reports back. ' +
    `By default waits up to timeout_s (${defaultChildTimeoutS}) for its answer; if it takes longer, or with background: true, ` +
    'it continues on its own and its result arrives later as a new turn.',
  input: z.object({
    task: z.string().min(1).max(20_000).describe('What the sub-agent should do, in full'),
    background: z.boolean().optional().describe('Return at once instead of waiting'),
    timeout_s: z.number().int().min(0).max(3_600).optional().describe('Seconds to wait for the answer'),
  }),
  flags: { sideEffects: true, sensitive: false },
  run() {
    return Promise.resolve({
      is_error: true,
      content: 'spawn_agent is carried out by the conversation workflow, not by a tool activity',
    });
  },
});
