/**
 * An assistant's A2A agent card (decision 0445): one JSON-RPC interface at `/a2a/{assistant_id}`
 * speaking A2A 1.0, one skill that is the assistant, streaming and push notifications on (decision 0485), and
 * the bearer token when the API has tokens.
 */
import { AgentCard } from '@a2a-js/sdk';
import type { Assistant } from '../../common/assistants';
import { serverVersion } from '../system/system-routes';

/** The A2A protocol version Keel serves. */
export const a2aVersion = '1.0';

/** Where an assistant's JSON-RPC interface is, under `base` (the API's own origin). */
export const a2aPath = (assistantId: string): string => `/a2a/${encodeURIComponent(assistantId)}`;

export interface AgentCardOptions {
  /** The origin the caller reached the API at, e.g. `http://127.0.0.1:8080`. */
  base: string;
  /** The API asks for a bearer token. */
  tokens: boolean;
}

export function agentCardJsonOf(assistant: Assistant, { base, tokens }: AgentCardOptions) {
  const description =
    assistant.description ?? `Keel agent ${assistant.name} (assistant ${assistant.assistant_id})`;
  return {
    name: assistant.name,
    description: `${description}. Each message runs one durable turn on Temporal; the context is the thread, the task is the run.`,
    supportedInterfaces: [
      {
        url: `${base}${a2aPath(assistant.assistant_id)}`,
        protocolBinding: 'JSONRPC',
        protocolVersion: a2aVersion,
      },
    ],
    provider: { organization: 'Keel', url: base },
    version: serverVersion,
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
    ...(tokens
      ? {
          securitySchemes: {
            bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'A Keel API token' } },
          },
          securityRequirements: [{ schemes: { bearer: { list: [] } } }],
        }
      : {}),
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: assistant.assistant_id,
        name: assistant.name,
        description,
        tags: ['keel', assistant.graph_id],
        examples: [],
      },
    ],
  };
}

/** The card as the SDK's transport reads it (it checks the caller's `A2A-Version` against it). */
export const agentCardOf = (assistant: Assistant, options: AgentCardOptions): AgentCard =>
  AgentCard.fromJSON(agentCardJsonOf(assistant, options));
