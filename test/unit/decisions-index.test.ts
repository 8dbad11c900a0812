import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const folder = path.join(__dirname, '../../docs/decisions');
const records = readdirSync(folder).filter((name) => /^\d{4}-.+\.md$/.test(name));
const index = readFileSync(path.join(folder, 'README.md'), 'utf8');

/** The index's rows: the record each links first, and its status cell. */
const rows = index
  .split('\n')
  .map((line) => /^\|\s*\[(\d{4})\]\(([^)]+)\)\s*\|[^|]+\|\s*(.+?)\s*\|$/.exec(line))
  .filter((match) => match !== null)
  .map(([, number, file, status]) => ({ number, file, status }));

describe('the index of decisions (docs/decisions/README.md)', () => {
  it('has a row for every record, in order, each linking its own file', () => {
    expect(rows.map((row) => row.file)).toEqual([...records].sort());
    for (const row of rows) expect(row.file?.startsWith(`${row.number}-`)).toBe(true);
  });

  it('gives every record a status: accepted, amended by N, or superseded by N, and N exists', () => {
    for (const row of rows) {
      expect(row.status).toMatch(/^(accepted|amended by \[\d{4}\]|superseded by \[\d{4}\])/);
      for (const [, linked] of row.status?.matchAll(/\]\((\d{4}-[^)]+\.md)\)/g) ?? [])
        expect(records).toContain(linked);
    }
  });
});
