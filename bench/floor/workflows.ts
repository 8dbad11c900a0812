/**
 * The raw Temporal floor: the least a durable step can cost on this server. A minimal workflow
 * that runs `activities` no-op activities one after another, with no state, events or queries.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { FloorActivities } from './activities';

const { noop } = proxyActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });

export async function floorWorkflow(activities: number): Promise<void> {
  for (let step = 0; step < activities; step++) await noop();
}
