/**
 * The metric names a PromQL expression reads: enough of PromQL's grammar to tell a metric from a
 * function, an aggregation, a keyword, a label, a string, a duration or a Grafana variable.
 */

/** Words PromQL gives a meaning of its own, where they stand without a following `(`. */
const keywords = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'atan2',
  'inf',
  'nan',
]);

export function metricNames(expression: string): string[] {
  const stripped = expression
    // Strings (label values, label_replace's arguments).
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    // Label matchers and grouping lists: `{…}`, `by (…)`, `without (…)`, `on (…)`, `ignoring (…)`, `group_left (…)`.
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    // Ranges, subqueries and offsets: `[5m]`, `[1h:1m]`, `[$__rate_interval]`, `offset 5m`.
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\boffset\s+-?[0-9a-z]+/g, ' ')
    // Grafana's variables and numbers (`1e3`, `0.95`).
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/\b\d[\w.]*/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\()?/g)) {
    const [, word, call] = match;
    if (call !== undefined || keywords.has(word!.toLowerCase())) continue;
    names.add(word!);
  }
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
