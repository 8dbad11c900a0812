/** Chooses and caches the model client for a `provider:model` spec. */
import type { KeelConfig } from '../../common/config';
import type { ModelSpec } from '../../common/model-spec';
import { failure } from '../errors';
import { AnthropicModel } from './anthropic';
import type { ModelClient } from './client';
import { ScriptedModel } from './scripted';

export type ModelClients = (spec: ModelSpec) => ModelClient;

export function createModelClients(providers: KeelConfig['providers']): ModelClients {
  const cache = new Map<string, ModelClient>();
  const build = (spec: ModelSpec): ModelClient => {
    switch (spec.provider) {
      case 'scripted':
        return new ScriptedModel();
      case 'anthropic':
        if (providers.anthropicApiKey === undefined) {
          throw failure(
            'ModelNotConfigured',
            `model ${spec.provider}:${spec.model} needs ANTHROPIC_API_KEY in the worker's environment`,
            { nonRetryable: true },
          );
        }
        return new AnthropicModel({
          apiKey: providers.anthropicApiKey,
          ...(providers.anthropicBaseUrl === undefined ? {} : { baseURL: providers.anthropicBaseUrl }),
        });
      case 'openai':
      case 'ollama':
        throw failure(
          'ModelNotConfigured',
          `the ${spec.provider} provider is not available in this version of Keel`,
          { nonRetryable: true },
        );
    }
  };
  return (spec) => {
    let client = cache.get(spec.provider);
    if (client === undefined) {
      client = build(spec);
      cache.set(spec.provider, client);
    }
    return client;
  };
}
