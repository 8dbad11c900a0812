/** Chooses and caches the model client for a `provider:model` spec. */
import type { KeelConfig } from '../../platform/config';
import type { ModelSpec } from '../../common/model-spec';
import { failure } from '../errors';
import { AnthropicModel } from './anthropic';
import type { ModelClient } from './client';
import { OllamaModel } from './ollama';
import { OpenAIModel } from './openai';
import { ScriptedModel } from './scripted';
import { TextToolsFallback } from './text-tools';

export type ModelClients = (spec: ModelSpec) => ModelClient;

export function createModelClients(providers: KeelConfig['providers']): ModelClients {
  const cache = new Map<string, ModelClient>();
  const stallTimeoutMs = providers.stallTimeoutS * 1000;
  const toolless = (provider: string): string[] =>
    providers.toollessModels.flatMap((spec) =>
      spec.startsWith(`${provider}:`) ? [spec.slice(provider.length + 1)] : [],
    );
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
          stallTimeoutMs,
          ...(providers.anthropicBaseUrl === undefined ? {} : { baseURL: providers.anthropicBaseUrl }),
        });
      case 'openai':
        // A local server (vLLM, LM Studio, Ollama's /v1) needs a base URL but usually no key.
        if (providers.openaiApiKey === undefined && providers.openaiBaseUrl === undefined) {
          throw failure(
            'ModelNotConfigured',
            `model ${spec.provider}:${spec.model} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) in the worker's environment`,
            { nonRetryable: true },
          );
        }
        return new TextToolsFallback(
          new OpenAIModel({
            apiKey: providers.openaiApiKey ?? 'no-key',
            ...(providers.openaiBaseUrl === undefined ? {} : { baseURL: providers.openaiBaseUrl }),
            stallTimeoutMs,
          }),
          toolless('openai'),
        );
      case 'ollama':
        return new TextToolsFallback(
          new OllamaModel({ host: providers.ollamaHost, stallTimeoutMs }),
          toolless('ollama'),
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
