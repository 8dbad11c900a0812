/**
 * The Grafana dashboard Keel ships (`telemetry/grafana/keel-dashboard.json`), read as its queries,
 * and what a set of scraped `/metrics` endpoints leaves unexported of it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { exportedNames, metricNames } from './promql';

export const dashboardFile = path.resolve(__dirname, '../../telemetry/grafana/keel-dashboard.json');

interface Panel {
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

/** Every query of the panels, with its panel's title; rows' nested panels included. */
function queriesOf(panels: Panel[]): { panel: string; expr: string }[] {
  return panels.flatMap((panel) => [
    ...(panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
    ...queriesOf(panel.panels ?? []),
  ]);
}

/** Every query of the dashboard, with its panel's title. */
export async function dashboardQueries(): Promise<{ panel: string; expr: string }[]> {
  const dashboard = JSON.parse(await readFile(dashboardFile, 'utf8')) as { panels: Panel[] };
  return queriesOf(dashboard.panels);
}

/** The names exported by these scrapes (Prometheus text expositions), all together. */
export const exportedByAll = (expositions: string[]): Set<string> =>
  new Set(expositions.flatMap((text) => [...exportedNames(text)]));

/** `panel: metric` for every metric a dashboard query names that `exported` lacks. */
export async function unexportedQueries(exported: Set<string>): Promise<string[]> {
  return (await dashboardQueries()).flatMap(({ panel, expr }) =>
    metricNames(expr)
      .filter((name) => !exported.has(name))
      .map((name) => `${panel}: ${name}`),
  );
}
