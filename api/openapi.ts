/** The OpenAPI document, with request bodies generated from the same schemas that validate them. */
import { z } from 'zod';
import { cleanupBody, decisionBody, limitsBody, searchBody } from './checkpoint-schemas';
import { protocolStreamModes, keelStreamMode } from './protocol/stream-modes';
import { cancelBody, createRunBody, createThreadBody } from './schemas';

const errorSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        type: { type: 'string' },
        code: { type: 'string' },
        message: { type: 'string' },
        param: { type: 'string' },
      },
      required: ['type', 'code', 'message'],
    },
    detail: { type: 'string' },
  },
};

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const body = (schema: z.ZodType) => ({
  required: true,
  ...json(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' })),
});
const errors = {
  '400': { description: 'Malformed JSON', ...json(errorSchema) },
  '401': { description: 'Missing or invalid token', ...json(errorSchema) },
  '404': { description: 'Unknown thread or run', ...json(errorSchema) },
  '409': { description: 'Conflict (thread_busy, thread_exists, thread_closed)', ...json(errorSchema) },
  '413': { description: 'Body too large', ...json(errorSchema) },
  '422': { description: 'Validation failed', ...json(errorSchema) },
  '503': {
    description:
      'Temporal unreachable, or (thread_unavailable) no worker answered a read in time; retry after Retry-After seconds',
    ...json(errorSchema),
  },
};
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Without a run_id: retries with the same key reach the same run',
  schema: { type: 'string' },
};
/** The answer when the thread could not take a decision or cancel at once: it is in its history. */
const queued = (description: string) => ({ '202': { description, ...json({ type: 'object' }) } });
const threadId = { name: 'thread_id', in: 'path', required: true, schema: { type: 'string' } };
const runId = { name: 'run_id', in: 'path', required: true, schema: { type: 'string' } };
const timeout = {
  name: 'timeout_s',
  in: 'query',
  required: false,
  schema: { type: 'number', default: 300, maximum: 3600 },
};
const startingAfter = {
  name: 'starting_after',
  in: 'query',
  required: false,
  schema: { type: 'integer', minimum: 0 },
};
const streamModeSchema = z
  .union([
    z.enum([...protocolStreamModes, keelStreamMode]),
    z.array(z.enum([...protocolStreamModes, keelStreamMode])),
  ])
  .optional()
  .describe(
    `LangGraph stream modes (default values), or "${keelStreamMode}" alone for Keel's native events; others answer 422`,
  );
const streamMode = {
  name: 'stream_mode',
  in: 'query',
  required: false,
  description: 'A mode, a JSON array of modes, or the parameter repeated (default values)',
  schema: { type: 'string' },
};
const ok = (description: string) => ({ '200': { description, ...json({ type: 'object' }) }, ...errors });

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Keel',
      version: '0.1.0',
      description: 'Durable AI agents on Temporal. Threads and runs follow the LangGraph Platform API.',
    },
    paths: {
      '/threads': {
        post: {
          summary: 'Create a thread',
          requestBody: body(createThreadBody),
          responses: ok('The thread'),
        },
      },
      '/threads/{thread_id}': {
        get: { summary: 'Get a thread', parameters: [threadId], responses: ok('The thread') },
        delete: { summary: 'Close and delete a thread', parameters: [threadId], responses: ok('Deleted') },
      },
      '/threads/{thread_id}/state': {
        get: {
          summary: 'Get the thread state: its newest checkpoint, LangChain messages in values',
          parameters: [threadId],
          responses: ok('The state'),
        },
      },
      '/threads/{thread_id}/state/checkpoint': {
        post: {
          summary: 'The state at a checkpoint ({checkpoint: {checkpoint_id}}); 404 checkpoint_not_found',
          parameters: [threadId],
          responses: ok('The state'),
        },
      },
      '/threads/{thread_id}/state/{checkpoint_id}': {
        get: {
          summary: 'The state at a checkpoint; 404 checkpoint_not_found',
          parameters: [
            threadId,
            { name: 'checkpoint_id', in: 'path', required: true, schema: { type: 'string' } },
          ],
          responses: ok('The state'),
        },
      },
      '/threads/{thread_id}/history': {
        get: {
          summary: 'Checkpoints, newest first: one per committed step (?limit, ?before=<checkpoint_id>)',
          parameters: [threadId],
          responses: ok('Thread states'),
        },
        post: {
          summary: 'Checkpoints, newest first ({limit, before, metadata})',
          parameters: [threadId],
          responses: ok('Thread states'),
        },
      },
      '/threads/{thread_id}/debug': {
        get: {
          summary: "Operators: the workflow's whole state (getState query)",
          parameters: [threadId],
          responses: ok('The state dump'),
        },
      },
      '/threads/{thread_id}/runs': {
        get: { summary: 'List runs, newest first', parameters: [threadId], responses: ok('Runs') },
        post: {
          summary:
            'Create a run (not awaited). Durable: with no worker holding the thread it is still taken, `queued`',
          parameters: [threadId, idempotencyKey],
          requestBody: body(createRunBody),
          responses: ok('The run'),
        },
      },
      '/threads/{thread_id}/runs/wait': {
        post: {
          summary:
            'Create a run and wait for its final values; 202 with the run `deferred` when timeout_s passes first',
          parameters: [threadId, timeout],
          requestBody: body(createRunBody),
          responses: {
            ...ok('Final values {messages}'),
            '202': { description: 'Still running: the run, status deferred', ...json({ type: 'object' }) },
          },
        },
      },
      '/threads/{thread_id}/runs/{run_id}': {
        get: { summary: 'Get a run', parameters: [threadId, runId], responses: ok('The run') },
      },
      '/threads/{thread_id}/runs/{run_id}/join': {
        get: {
          summary: 'Wait for a run; 202 with the run `deferred` when timeout_s passes first',
          parameters: [threadId, runId, timeout],
          responses: {
            ...ok('Final values {messages}'),
            '202': { description: 'Still running', ...json({ type: 'object' }) },
          },
        },
      },
      '/threads/{thread_id}/runs/{run_id}/cancel': {
        post: {
          summary: 'Cancel a run (idempotent)',
          parameters: [threadId, runId],
          requestBody: { ...body(cancelBody), required: false },
          responses: {
            ...ok('The run'),
            ...queued('The cancel is queued: no worker holds the thread right now'),
          },
        },
      },
      '/threads/{thread_id}/runs/stream': {
        post: {
          summary:
            'Create a run and stream it (SSE) in the stream modes asked for: metadata, then events with an id each. Content-Location names the run, Location its GET stream',
          parameters: [threadId],
          requestBody: body(createRunBody.extend({ stream_mode: streamModeSchema })),
          responses: { '200': { description: 'text/event-stream' }, ...errors },
        },
      },
      '/threads/{thread_id}/runs/{run_id}/stream': {
        get: {
          summary:
            'Stream a run (SSE) from its first event, or after `Last-Event-ID` / `starting_after`; a finished run replays and ends. 410 stream_cursor_expired for a cursor older than the log',
          parameters: [threadId, runId, startingAfter, streamMode],
          responses: { '200': { description: 'text/event-stream' }, ...errors },
        },
      },
      '/threads/{thread_id}/stream': {
        get: {
          summary: "Follow the thread's events (SSE): live, or after `Last-Event-ID` / `starting_after`",
          parameters: [threadId, startingAfter],
          responses: { '200': { description: 'text/event-stream' }, ...errors },
        },
      },
      '/runs': {
        get: {
          summary: 'Unfinished runs across threads (status: queued, running, deferred; comma-separated)',
          parameters: [
            {
              name: 'status',
              in: 'query',
              required: false,
              schema: { type: 'string', default: 'queued,running,deferred' },
            },
          ],
          responses: ok('Runs, newest first'),
        },
      },
      '/threads/{thread_id}/approvals': {
        get: { summary: 'Pending approvals', parameters: [threadId], responses: ok('Pending approvals') },
      },
      '/threads/{thread_id}/approvals/{approval_id}': {
        post: {
          summary: 'Approve or deny; 409 approval_not_pending for unknown or decided ids',
          parameters: [
            threadId,
            { name: 'approval_id', in: 'path', required: true, schema: { type: 'string' } },
          ],
          requestBody: body(decisionBody),
          responses: {
            ...ok('The decided approval'),
            ...queued('The decision is queued: no worker holds the thread right now'),
          },
        },
      },
      '/threads/{thread_id}/limits': {
        post: {
          summary: 'Raise or lower the budgets (null removes one)',
          parameters: [threadId],
          requestBody: body(limitsBody),
          responses: ok('The thread'),
        },
      },
      '/threads/{thread_id}/export': {
        get: {
          summary: 'The transcript as JSON or Markdown (?format=json|markdown)',
          parameters: [
            threadId,
            { name: 'format', in: 'query', required: false, schema: { type: 'string' } },
          ],
          responses: ok('The export'),
        },
      },
      '/threads/search': {
        post: { summary: 'Find threads', requestBody: body(searchBody), responses: ok('Threads') },
      },
      '/threads/cleanup': {
        post: {
          summary: 'Close and delete old threads (dry run by default)',
          requestBody: body(cleanupBody),
          responses: ok('What was (or would be) deleted'),
        },
      },
      '/assistants/search': {
        post: {
          summary: 'Find assistants ({graph_id, metadata, limit, offset})',
          responses: ok('Assistants'),
        },
      },
      '/assistants/{assistant_id}': {
        get: {
          summary: 'Get an assistant (the default one is agent)',
          parameters: [{ name: 'assistant_id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: ok('The assistant'),
        },
      },
      '/assistants/{assistant_id}/graph': {
        get: {
          summary: "The assistant's graph: agent and tools",
          parameters: [{ name: 'assistant_id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: ok('Nodes and edges'),
        },
      },
      '/ok': {
        get: { summary: 'Liveness, as LangGraph names it', responses: { '200': { description: 'ok' } } },
      },
      '/info': {
        get: { summary: 'Server version and capabilities', responses: { '200': { description: 'info' } } },
      },
      '/healthz': { get: { summary: 'Liveness', responses: { '200': { description: 'ok' } } } },
      '/readyz': {
        get: {
          summary: 'Readiness: Temporal reachable and a worker polling',
          responses: {
            '200': { description: 'ready' },
            '503': { description: 'not ready', ...json(errorSchema) },
          },
        },
      },
      '/openapi.json': {
        get: { summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1' } } },
      },
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
  };
}
