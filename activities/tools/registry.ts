/**
 * The tools a worker offers: built-ins plus whatever extensions add. The model is told about
 * each; the workflow learns each one's flags through the model activity's result.
 */
import { z } from 'zod';
import type { ToolDescriptor, ToolFlags, ToolOutcome, ToolSchema } from '../../common/tools';
import type { HostEntry } from '../../platform/network-hosts';
import { memoryToolSource } from '../../platform/memory';
import type { Store } from '../../store/store';
import type { Sandbox } from './sandbox';

export interface ToolContext {
  threadId: string;
  /** The thread's workspace directory (a realpath). */
  workspace: string;
  signal: AbortSignal;
  /** `threadId:toolUseId`, stable across any repeat of the same call. */
  idempotencyKey: string;
  /** Variables child processes inherit (PATH, locale). */
  environment: Record<string, string>;
  /** Where commands run (bash). */
  sandbox: Sandbox;
  /** Hosts commands may reach through Keel's proxy (granted by `Sandbox.grant`). */
  networkHosts: HostEntry[];
  /** With the thread's memory on: the Store and whose items the memory tools use. */
  memory?: { owner: string; store: Store };
}

/** Which tools a thread is offered: those of `source` memory only with its memory on. */
export interface ToolSelection {
  memory?: boolean | undefined;
}

const offered = (tool: Tool, selection: ToolSelection): boolean =>
  tool.descriptor.source !== memoryToolSource || selection.memory === true;

export interface Tool {
  descriptor: ToolDescriptor;
  run(input: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome>;
}

/** Builds a tool from a zod schema: the model gets its JSON Schema, the tool gets parsed input. */
export function defineTool<S extends z.ZodObject>(definition: {
  name: string;
  description: string;
  input: S;
  flags: ToolFlags;
  source?: string;
  run(input: z.infer<S>, context: ToolContext): Promise<ToolOutcome>;
}): Tool {
  const jsonSchema = z.toJSONSchema(definition.input, { target: 'draft-7' }) as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  const schema: ToolSchema['input_schema'] = {
    type: 'object',
    properties: jsonSchema.properties ?? {},
    ...(jsonSchema.required === undefined ? {} : { required: jsonSchema.required }),
  };
  return {
    descriptor: {
      name: definition.name,
      description: definition.description,
      input_schema: schema,
      ...definition.flags,
      source: definition.source ?? 'builtin',
    },
    async run(input, context) {
      const parsed = definition.input.safeParse(input);
      if (!parsed.success) {
        const problems = parsed.error.issues.map(
          (issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`,
        );
        return { is_error: true, content: `Invalid input for ${definition.name}: ${problems.join('; ')}` };
      }
      return definition.run(parsed.data, context);
    },
  };
}

export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();

  constructor(tools: readonly Tool[] = []) {
    for (const tool of tools) this.add(tool);
  }

  add(tool: Tool): void {
    this.#tools.set(tool.descriptor.name, tool);
  }

  /** Removes every tool that came from `source` (an extension being disabled or reloaded). */
  removeSource(source: string): void {
    for (const [name, tool] of this.#tools) if (tool.descriptor.source === source) this.#tools.delete(name);
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  schemas(selection: ToolSelection = {}): ToolSchema[] {
    return [...this.#tools.values()]
      .filter((tool) => offered(tool, selection))
      .map(({ descriptor: { name, description, input_schema } }) => ({
        name,
        description,
        input_schema,
      }));
  }

  /** Flags for the named tools offered to the thread; unknown names are left out. */
  flagsFor(names: readonly string[], selection: ToolSelection = {}): Record<string, ToolFlags> {
    const flags: Record<string, ToolFlags> = {};
    for (const name of names) {
      const tool = this.#tools.get(name);
      if (tool !== undefined && offered(tool, selection))
        flags[name] = { sideEffects: tool.descriptor.sideEffects, sensitive: tool.descriptor.sensitive };
    }
    return flags;
  }
}
