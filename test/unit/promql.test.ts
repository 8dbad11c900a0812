/**
 * The PromQL reader the dashboard test relies on (Prometheus's own grammar): it finds every metric
 * and nothing else, and refuses what is not PromQL.
 */
import { exportedNames, metricNames } from '../helpers/promql';

describe('the metric names of a PromQL expression', () => {
  it.each([
    ['keel_runs_total', ['keel_runs_total']],
    ['sum by (status) (rate(keel_runs_total{status="failed"}[$__rate_interval])) * 60', ['keel_runs_total']],
    [
      'histogram_quantile(0.95, sum by (le, model) (rate(keel_model_time_to_first_token_seconds_bucket[5m])))',
      ['keel_model_time_to_first_token_seconds_bucket'],
    ],
    [
      'sum(rate(a_total[1m])) / ignoring (kind) group_left sum without (tool) (b_total offset 1h) > bool 0.5',
      ['a_total', 'b_total'],
    ],
    ['rate(up_total[1h:5m]) and on (job) c unless d', ['up_total', 'c', 'd']],
    ['label_replace(x, "dst", "$1", "src", "(.*)")', ['x']],
    ['sum(increase(keel_model_cost_usd_total[$__range])) / ${__range_s}', ['keel_model_cost_usd_total']],
    [
      'count({__name__="keel_tool_calls_total", tool="bash"}) + count({"keel.dotted"})',
      ['keel_tool_calls_total', 'keel.dotted'],
    ],
    ['sum_over_time(max(by_name)[10m:1m]) @ start()', ['by_name']],
  ])('%s', (expression, names) => {
    expect(metricNames(expression).sort()).toEqual([...names].sort());
  });
});

describe('a query that is not PromQL', () => {
  it.each(['sum(rate(keel_runs_total[5m])', 'keel_runs_total{status=}', 'rate(keel_runs_total[$window])'])(
    'is refused: %s',
    (expression) => {
      expect(() => metricNames(expression)).toThrow(/not PromQL/);
    },
  );
});

describe('the names an exposition exports', () => {
  it('adds a histogram’s series and keeps counters and gauges', () => {
    const text = [
      '# HELP keel_runs_total Runs.',
      '# TYPE keel_runs_total counter',
      '# TYPE keel_run_duration_seconds histogram',
      '# TYPE keel_stream_clients gauge',
      'keel_stream_clients{style="keel"} 0',
    ].join('\n');
    expect([...exportedNames(text)].sort()).toEqual(
      [
        'keel_run_duration_seconds',
        'keel_run_duration_seconds_bucket',
        'keel_run_duration_seconds_count',
        'keel_run_duration_seconds_sum',
        'keel_runs_total',
        'keel_stream_clients',
      ].sort(),
    );
  });
});
