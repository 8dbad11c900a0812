/** The OpenAPI document, with request bodies generated from the same schemas that validate them. */
import { z } from 'zod';
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
  '503': { description: 'Temporal unavailable', ...json(errorSchema) },
};
const threadId = { name: 'thread_id', in: 'path', required: true, schema: { type: 'string' } };
const runId = { name: 'run_id', in: 'path', required: true, schema: { type: 'string' } };
const timeout = {
  name: 'timeout_s',
  in: 'query',
  required: false,
  schema: { type: 'number', default: 300, maximum: 3600 },
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
      },
      '/threads/{thread_id}/state': {
        get: {
          summary: 'Get the thread state ({values: {messages}})',
          parameters: [threadId],
          responses: ok('The state'),
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
          summary: 'Create a run (not awaited)',
          parameters: [threadId],
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
          responses: ok('The run'),
        },
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
