/** What each scenario reports: rows for the printed table, and its raw figures for the JSON file. */
export interface Row {
  scenario: string;
  metric: string;
  value: string;
  /** The target it is held to, or what it is compared with. */
  note?: string;
}

export interface ScenarioResult {
  rows: Row[];
  data: Record<string, unknown>;
}

/** A Markdown table of `cells` under `headers`, each column as wide as its widest cell. */
export function markdownTable(headers: string[], cells: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...cells.map((line) => line[column]!.length)),
  );
  const line = (values: string[]) =>
    `| ${values.map((value, column) => value.padEnd(widths[column]!)).join(' | ')} |`;
  return [
    line(headers),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...cells.map(line),
  ].join('\n');
}

export function table(rows: Row[]): string {
  return markdownTable(
    ['scenario', 'metric', 'value', 'target / note'],
    rows.map((row) => [row.scenario, row.metric, row.value, row.note ?? '']),
  );
}
