/**
 * Creates the two databases (persistence, visibility) and brings their schemas up to the
 * server's version with Temporal's own SQL tool and the schemas embedded in it — the steps
 * Temporal's auto-setup image runs, safe to repeat on every start: a database that exists is
 * kept, and `update-schema` applies only the versions not yet applied.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { persistenceDatabase, visibilityDatabase } from './cluster-config';

const run = promisify(execFile);

export interface SchemaOptions {
  sqlTool: string;
  port: number;
  user: string;
  password: string;
}

const schemas = [
  { database: persistenceDatabase, schema: 'postgresql/v12/temporal' },
  { database: visibilityDatabase, schema: 'postgresql/v12/visibility' },
];

async function tool(options: SchemaOptions, database: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(
      options.sqlTool,
      [
        '--plugin',
        'postgres12',
        '--endpoint',
        '127.0.0.1',
        '--port',
        String(options.port),
        '--database',
        database,
        ...args,
      ],
      // The password travels in the environment, not on a command line anyone can read in `ps`.
      { env: { SQL_USER: options.user, SQL_PASSWORD: options.password } },
    );
    return `${stdout}${stderr}`;
  } catch (error) {
    const output = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}`;
    throw Object.assign(
      new Error(`temporal-sql-tool ${args[0]} on ${database} failed: ${output.trim().slice(-2000)}`),
      {
        output,
      },
    );
  }
}

/** Creates what is missing and upgrades what is old; returns one line per database. */
export async function setUpSchemas(options: SchemaOptions): Promise<string[]> {
  const lines: string[] = [];
  for (const { database, schema } of schemas) {
    try {
      await tool(options, database, ['create-database']);
    } catch (error) {
      if (!/already exists/.test((error as { output?: string }).output ?? '')) throw error;
    }
    await tool(options, database, ['setup-schema', '--version', '0.0']);
    await tool(options, database, ['update-schema', '--schema-name', schema]);
    lines.push(`${database}: ${schema} at its latest version`);
  }
  return lines;
}
