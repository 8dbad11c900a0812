/**
 * The extensions file (KEEL_EXTENSIONS_FILE): which tool servers to start and how far to trust
 * their tools. A tool is side-effecting and sensitive unless the file says otherwise.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { KeelError } from '../../common/errors';

const serverSchema = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  disabled: z.boolean().default(false),
  /** `true` for every tool of the server, or the names of the read-only ones. */
  read_only: z.union([z.boolean(), z.array(z.string())]).default(false),
  /** Whether its tools need approval under `KEEL_APPROVAL=require`. */
  sensitive: z.boolean().default(true),
});

const fileSchema = z.strictObject({
  servers: z.record(
    z.string().regex(/^[a-zA-Z0-9_-]{1,24}$/, 'letters, digits, _ or -, at most 24'),
    serverSchema,
  ),
});

export type ExtensionServerConfig = z.infer<typeof serverSchema>;
export type ExtensionsFile = z.infer<typeof fileSchema>;

export class ExtensionsConfigError extends KeelError {
  override readonly name = 'ExtensionsConfigError';
}

export async function readExtensionsFile(file: string): Promise<ExtensionsFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ExtensionsConfigError(`cannot read extensions file ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ExtensionsConfigError(`extensions file ${file} is not JSON: ${(error as Error).message}`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || 'file'}: ${issue.message}`,
    );
    throw new ExtensionsConfigError(`extensions file ${file}: ${problems.join('; ')}`);
  }
  return parsed.data;
}

export function isReadOnly(server: ExtensionServerConfig, tool: string): boolean {
  return server.read_only === true || (Array.isArray(server.read_only) && server.read_only.includes(tool));
}
