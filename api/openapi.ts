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

/**
 * What a request may ask that depends on configuration, said where the schema alone cannot: the
 * `network_hosts` a request may name are the operator's (none by default), so an entry the
 * operator does not allow is invalid data in the document as at the door.
 */
function withConfiguration(schema: unknown, networkHosts: readonly string[]): unknown {
  if (Array.isArray(schema)) return schema.map((item) => withConfiguration(item, networkHosts));
  if (typeof schema !== 'object' || schema === null) return schema;
  const result: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) result[key] = withConfiguration(value, networkHosts);
  const properties = result.properties as Record<string, JsonSchema> | undefined;
  const hosts = properties?.network_hosts;
  if (properties !== undefined && hosts?.type === 'array')
    properties.network_hosts =
      networkHosts.length === 0
        ? {
            ...hosts,
            maxItems: 0,
            description: 'None: the operator allows no host (KEEL_SANDBOX_NETWORK_HOSTS)',
          }
        : {
            ...hosts,
            items: { ...(hosts.items as JsonSchema), enum: [...networkHosts] },
            description: `Hosts the operator allows (KEEL_SANDBOX_NETWORK_HOSTS): ${networkHosts.join(', ')}; a narrower entry under one of them is taken too`,
          };
  return result;
}

const errorDescriptions: Record<ErrorStatus, string> = {
  400: 'The body is not JSON (invalid_json), or nests more than 64 levels deep (json_too_deep)',
  401: 'No valid token: send "Authorization: Bearer <token>" or "x-api-key: <token>"',
  403: "Refused: origin_not_allowed (a write whose Origin is neither the API's own nor one listed in KEEL_API_CORS_ORIGINS), or what the summary names",
  404: 'Not found; the message names what (thread_not_found, run_not_found, …)',
  408: 'request_timeout: the headers took more than 5 s, or the whole request more than 10 s, to arrive',
  409: 'Conflict (thread_busy, thread_exists, thread_closed, run_exists, approval_not_pending)',
  410: 'stream_cursor_expired: the event log was truncated past this cursor',
  413: 'The body is larger than 1 MiB',
  415: 'The body is not sent as application/json (unsupported_media_type), or its charset is not supported',
  421: 'host_not_allowed: the Host header names a host this API does not serve (KEEL_API_ALLOWED_HOSTS)',
  422: 'Validation failed; error.param names the field',
  429: "The owner's quota (KEEL_QUOTA_*): concurrency_limit (as many runs under way as the quota allows) or quota_exceeded (the day's or month's spend is spent or held); retry after Retry-After seconds",
  503: 'Temporal unreachable, or no worker answered in time; retry after Retry-After seconds',
};

const retryAfter = {
  description: 'Seconds to wait before retrying (nothing was lost)',
  schema: { type: 'integer', minimum: 0 },
};

/** What the served document depends on: the API's configuration, not the operations. */
export interface DocumentOptions {
  /** Tokens are configured (`KEEL_API_TOKENS`): operations ask for one, and answer 401 without. */
  tokens: boolean;
  /**
   * The hosts the operator lets threads' commands reach (`KEEL_SANDBOX_NETWORK_HOSTS`), as
   * written: a thread, run or assistant may ask for these (or narrower) and nothing else.
   */
  networkHosts: readonly string[];
}

const writes = new Set(['post', 'put', 'patch', 'delete']);

/**
 * The errors an operation can answer: its own, those of the API's door (api/app.ts: the host
 * check, request timeouts, JSON-only bodies, writes checked by Origin, tokens when configured),
 * and those its shape brings.
 */
export function errorStatuses(spec: AnyOperation, { tokens }: DocumentOptions): ErrorStatus[] {
  const statuses = new Set<ErrorStatus>([...(spec.errors ?? []), 408, 415, 421]);
  if (writes.has(spec.method)) statuses.add(403);
  if (tokens && spec.public !== true) statuses.add(401);
  if (spec.params !== undefined) statuses.add(404);
  if (spec.query !== undefined || spec.body !== undefined) statuses.add(422);
  if (spec.body !== undefined) for (const status of [400, 413] as const) statuses.add(status);
  return [...statuses].sort();
}

/** `get /threads/{thread_id}/runs` → `get_threads_thread_id_runs`. */
export const defaultOperationId = (spec: AnyOperation): string =>
  [spec.method, ...spec.path.split(/[^A-Za-z0-9]+/).filter((word) => word !== '')].join('_');

/**
 * One event of a Server-Sent Events stream as clients parse it: its `event` name (`message`
 * when the stream names none), its `data` (JSON, one value per event), and the `id` to resume
 * after. OpenAPI 3.1 describes an event stream's events by its `schema`.
 */
const serverSentEvent = {
  type: 'object',
  required: ['event', 'data'],
  properties: {
    event: { type: 'string', description: 'The event name: a stream mode, or Keel event type' },
    data: { type: 'string', description: 'The event, as JSON' },
    id: { type: 'string', description: 'Resume after this event with Last-Event-ID' },
    retry: { type: 'integer', minimum: 0 },
  },
};

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

function responses(spec: AnyOperation, options: DocumentOptions): JsonSchema {
  const answers: JsonSchema = {};
  for (const [status, answer] of Object.entries(spec.responses)) {
    if (answer === undefined) continue;
    const content: JsonSchema = {};
    if (answer.schema !== undefined)
      content['application/json'] = { schema: jsonSchema(answer.schema, 'output') };
    for (const media of answer.media ?? [])
      content[media] = { schema: media === 'text/event-stream' ? serverSentEvent : { type: 'string' } };
    // A 204 has no body at all.
    answers[status] = {
      description: answer.description,
      ...(Object.keys(content).length === 0 ? {} : { content }),
    };
  }
  for (const status of errorStatuses(spec, options))
    answers[String(status)] = {
      description: errorDescriptions[status],
      ...(status === 503 || status === 429 ? { headers: { 'Retry-After': retryAfter } } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  return answers;
}

function describe(spec: AnyOperation, options: DocumentOptions): JsonSchema {
  const parameterList = parameters(spec);
  return {
    operationId: spec.operationId ?? defaultOperationId(spec),
    summary: spec.summary,
    ...(spec.tags === undefined ? {} : { tags: spec.tags }),
    ...(parameterList.length === 0 ? {} : { parameters: parameterList }),
    ...(spec.body === undefined
      ? {}
      : {
          requestBody: {
            required: bodyRequired(spec.body),
            content: {
              'application/json': {
                schema: withConfiguration(jsonSchema(spec.body, 'input'), options.networkHosts),
              },
            },
          },
        }),
    responses: responses(spec, options),
    ...(options.tokens && spec.public === true ? { security: [] } : {}),
  };
}

/**
 * The document as the API runs: with tokens configured every operation but the public ones asks
 * for one; without (a loopback-only API, the default) none does, and the document says no
 * security at all.
 */
export function openApiDocument(
  operations: readonly AnyOperation[],
  options: DocumentOptions,
): Record<string, unknown> {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const spec of operations) (paths[spec.path] ??= {})[spec.method] = describe(spec, options);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Keel',
      version: '0.1.0',
      description: 'Durable AI agents on Temporal. Threads and runs follow the LangGraph Platform API.',
    },
    ...(options.tokens ? { security: [{ bearer: [] }, { apiKey: [] }] } : {}),
    paths,
    components: {
      schemas: { Error: jsonSchema(errorBody, 'output') },
      ...(options.tokens
        ? {
            securitySchemes: {
              bearer: { type: 'http', scheme: 'bearer' },
              apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
            },
          }
        : {}),
    },
  };
}
