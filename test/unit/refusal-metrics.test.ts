/** `keel_refusals_total` in the worker (decision 0440): runs a budget or a quota ended, by reason. */
import { WorkerMetrics } from '../../telemetry/worker-metrics';

describe('the worker counts refusals by reason', () => {
  it('counts runs ended by a budget or a quota, and no others', async () => {
    const metrics = new WorkerMetrics();
    const runEnded = metrics.sinks().keelMetrics.runEnded.fn;
    const info = {} as Parameters<typeof runEnded>[0];
    for (const status_reason of ['budget_exceeded', 'budget_exceeded', 'quota_exceeded', 'max_steps', 'none'])
      void runEnded(info, { status: 'failed', status_reason, duration_ms: 10 });
    const text = await metrics.registry.metrics();
    expect(text).toContain('keel_refusals_total{reason="budget_exceeded"} 2');
    expect(text).toContain('keel_refusals_total{reason="quota_exceeded"} 1');
    expect(text).not.toContain('keel_refusals_total{reason="max_steps"}');
  });
});
