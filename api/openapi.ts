/**
 * The OpenAPI document, made from the operations' own zod schemas (api/contract.ts): requests
 * as the routes validate them (`io: 'input'`), responses as they are answered (`io: 'output'`).
 */
import { z } from 'zod';
import { bodyRequired, operation, type AnyOperation, type ErrorStatus } from './contract';
import { errorBody } from './response-schemas';

export const openApiOperation = operation({
  method: 'get',
  path: '/openapi.json',
  summary: 'This document',
  public: true,
  responses: { 200: { description: 'OpenAPI 3.1', schema: z.record(z.string(), z.unknown()) } },
});

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  return rest;
}

const errorDescriptions: Record<ErrorStatus, string> = {
  400: 'The body is not JSON (invalid_json), or nests more than 64 levels deep (json_too_deep)',
  401: 'No valid token: send "Authorization: Bearer <token>" or "x-api-key: <token>"',
  404: 'Not found; the message names what (thread_not_found, run_not_found, …)',
  409: 'Conflict (thread_busy, thread_exists, thread_closed, run_exists, approval_not_pending)',
  410: 'stream_cursor_expired: the event log was truncated past this cursor',
  413: 'The body is larger than 1 MiB',
  415: 'The body is not sent as application/json (unsupported_media_type), or its charset is not supported',
  422: 'Validation failed; error.param names the field',
  503: 'Temporal unreachable, or no worker answered in time; retry after Retry-After seconds',
};

const retryAfter = {
  description: 'Seconds to wait before retrying (nothing was lost)',
  schema: { type: 'integer', minimum: 0 },
};

/** The errors an operation can answer: its own, plus those its shape brings. */
export function errorStatuses(spec: AnyOperation): ErrorStatus[] {
  const statuses = new Set<ErrorStatus>(spec.errors ?? []);
  if (spec.public !== true) statuses.add(401);
  if (spec.params !== undefined) statuses.add(404);
  if (spec.query !== undefined || spec.body !== undefined) statuses.add(422);
  if (spec.body !== undefined) for (const status of [400, 413, 415] as const) statuses.add(status);
  return [...statuses].sort();
}

function parameters(spec: AnyOperation): JsonSchema[] {
  const found: JsonSchema[] = [];
  for (const [name, schema] of Object.entries(spec.params ?? {}))
    found.push({ name, in: 'path', required: true, schema: jsonSchema(schema, 'input') });
  for (const [name, { schema, description }] of Object.entries(spec.headers ?? {}))
    found.push({ name, in: 'header', required: false, description, schema: jsonSchema(schema, 'input') });
  if (spec.query !== undefined) {
    const query = jsonSchema(spec.query, 'input') as {
      properties?: Record<string, JsonSchema>;
      required?: string[];
    };
    for (const [name, { description, ...schema }] of Object.entries(query.properties ?? {}))
      found.push({
        name,
        in: 'query',
        required: query.required?.includes(name) ?? false,
        ...(description === undefined ? {} : { description }),
        schema,
      });
  }
  return found;
}

function responses(spec: AnyOperation): JsonSchema {
  const answers: JsonSchema = {};
  for (const [status, answer] of Object.entries(spec.responses)) {
    if (answer === undefined) continue;
    const content: JsonSchema = {};
    if (answer.schema !== undefined)
      content['application/json'] = { schema: jsonSchema(answer.schema, 'output') };
    for (const media of answer.media ?? []) content[media] = { schema: { type: 'string' } };
    // A 204 has no body at all.
    answers[status] = {
      description: answer.description,
      ...(Object.keys(content).length === 0 ? {} : { content }),
    };
  }
  for (const status of errorStatuses(spec))
    answers[String(status)] = {
      description: errorDescriptions[status],
      ...(status === 503 ? { headers: { 'Retry-After': retryAfter } } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  return answers;
}

function describe(spec: AnyOperation): JsonSchema {
  const parameterList = parameters(spec);
  return {
    summary: spec.summary,
    ...(spec.tags === undefined ? {} : { tags: spec.tags }),
    ...(parameterList.length === 0 ? {} : { parameters: parameterList }),
    ...(spec.body === undefined
      ? {}
      : {
          requestBody: {
            required: bodyRequired(spec.body),
            content: { 'application/json': { schema: jsonSchema(spec.body, 'input') } },
          },
        }),
    responses: responses(spec),
    ...(spec.public === true ? { security: [] } : {}),
  };
}

export function openApiDocument(operations: readonly AnyOperation[]): Record<string, unknown> {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const spec of operations) (paths[spec.path] ??= {})[spec.method] = describe(spec);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Keel',
      version: '0.1.0',
      description: 'Durable AI agents on Temporal. Threads and runs follow the LangGraph Platform API.',
    },
    // Without KEEL_API_TOKENS (loopback only) no token is asked for.
    security: [{ bearer: [] }, { apiKey: [] }],
    paths,
    components: {
      schemas: { Error: jsonSchema(errorBody, 'output') },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
    },
  };
}
