/**
 * The metric names a PromQL expression reads, by Prometheus's own PromQL grammar
 * (`@prometheus-io/lezer-promql`, the parser of Prometheus's web UI; decision 0411): the name of
 * every vector selector, whether written as `name{…}` or `{__name__="name"}`.
 */
import { parser } from '@prometheus-io/lezer-promql';

/**
 * Grafana's interval variables, which Grafana replaces with a duration before Prometheus sees the
 * query: any duration parses the same.
 */
const grafanaDurations =
  /\$(?:\{__(?:rate_interval|interval|range)(?:_ms|_s)?\}|__(?:rate_interval|interval|range)(?:_ms|_s)?\b)/g;

/** A string literal's value (PromQL's strings are Go's: `"…"`, `'…'` with escapes, or `` `…` `` raw). */
function stringValue(literal: string): string {
  if (literal.startsWith('`')) return literal.slice(1, -1);
  return literal.slice(1, -1).replace(/\\(.)/g, '$1');
}

export function metricNames(expression: string): string[] {
  const text = expression.replace(grafanaDurations, '5m');
  const tree = parser.parse(text);
  const names = new Set<string>();
  const errors: number[] = [];
  const read = (node: { from: number; to: number }) => text.slice(node.from, node.to);
  tree.iterate({
    enter: (ref) => {
      if (ref.type.isError) errors.push(ref.from);
      if (ref.name !== 'VectorSelector') return;
      const selector = ref.node;
      const identifier = selector.getChild('Identifier');
      if (identifier !== null) names.add(read(identifier));
      // `{__name__="x"}` and Prometheus 3's `{"x"}` name the metric inside the braces.
      for (const matcher of selector.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []) {
        const label = matcher.getChild('LabelName');
        const op = matcher.getChild('MatchOp')?.firstChild;
        const value = matcher.getChild('StringLiteral');
        if (label !== null && read(label) === '__name__' && op?.name === 'EqlSingle' && value !== null)
          names.add(stringValue(read(value)));
      }
      for (const quoted of selector.getChild('LabelMatchers')?.getChildren('QuotedLabelName') ?? []) {
        const value = quoted.getChild('StringLiteral');
        if (value !== null) names.add(stringValue(read(value)));
      }
    },
  });
  if (errors.length > 0)
    throw new Error(`not PromQL at ${errors.map((at) => `offset ${at}`).join(', ')}: ${expression}`);
  return [...names];
}

/** The names a Prometheus text exposition exports, from its `# TYPE` lines: a histogram's series included. */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
    // OpenMetrics names a counter without its `_total`; the series carries it.
    if (type === 'counter' && !name!.endsWith('_total')) names.add(`${name}_total`);
  }
  return names;
}
