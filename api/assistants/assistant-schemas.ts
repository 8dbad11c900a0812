/** Request bodies of the assistants endpoints, as LangGraph's SDKs send them. */
import { z } from 'zod';
import { id, threadConfigInput } from '../schemas';
import { graphId } from '../protocol/graph';

/** Keel serves one graph: the document says so (enum), and any other answers `graph_not_found`. */
const graph = z
  .string()
  .refine((value) => value === graphId, {
    error: (issue) =>
      `graph ${String(issue.input).slice(0, 200)} not found; Keel serves one graph, "${graphId}"`,
    params: { code: 'graph_not_found' },
  })
  .meta({ enum: [graphId] });

/**
 * What an assistant configures (`config.configurable` or `context`): Keel's thread settings. A key
 * Keel does not know is refused rather than stored and ignored.
 */
export const assistantSettings = threadConfigInput.strict();

const metadata = z
  .record(z.string(), z.unknown())
  .refine((value) => JSON.stringify(value).length <= 16_384, 'metadata must be at most 16 KiB of JSON');

const assistantFields = {
  graph_id: graph.optional(),
  config: z.object({ configurable: assistantSettings.optional() }).optional(),
  context: assistantSettings.optional(),
  metadata: metadata.optional(),
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(2_000).nullable().optional(),
};

export const createAssistantBody = z.object({
  ...assistantFields,
  graph_id: graph,
  assistant_id: id.optional(),
  if_exists: z.enum(['raise', 'do_nothing']).default('raise'),
});
export type CreateAssistantBody = z.infer<typeof createAssistantBody>;

export const updateAssistantBody = z.object(assistantFields);
export type UpdateAssistantBody = z.infer<typeof updateAssistantBody>;

const sortOrder = z.enum(['asc', 'desc']).optional();

export const searchAssistantsBody = z
  .object({
    graph_id: z.string().max(200).optional(),
    name: z.string().max(200).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    limit: z.number().int().min(1).max(1_000).default(10),
    offset: z.number().int().min(0).default(0),
    sort_by: z.enum(['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at']).optional(),
    sort_order: sortOrder,
    select: z.array(z.string()).optional(),
  })
  .default({ limit: 10, offset: 0 });
export type SearchAssistantsBody = z.infer<typeof searchAssistantsBody>;

export const countAssistantsBody = z
  .object({
    graph_id: z.string().max(200).optional(),
    name: z.string().max(200).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .default({});

export const listVersionsBody = z
  .object({
    metadata: z.record(z.string(), z.unknown()).optional(),
    limit: z.number().int().min(1).max(1_000).default(10),
    offset: z.number().int().min(0).default(0),
  })
  .default({ limit: 10, offset: 0 });

export const setLatestBody = z.object({ version: z.number().int().min(1) });

export const deleteAssistantQuery = z.object({
  delete_threads: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
});
