export const ModelProvider = {
  anthropic: 'anthropic',
  openai: 'openai',
  ollama: 'ollama',
  scripted: 'scripted',
} as const;
export type ModelProvider = (typeof ModelProvider)[keyof typeof ModelProvider];

export interface ModelSpec {
  provider: ModelProvider;
  model: string;
}

const providers = Object.values(ModelProvider) as string[];

/** Parses `provider:model` (`anthropic:claude-sonnet-4-6`); returns an error message when malformed. */
export function parseModelSpec(spec: string): ModelSpec | string {
  const separator = spec.indexOf(':');
  const provider = separator === -1 ? spec : spec.slice(0, separator);
  const model = separator === -1 ? '' : spec.slice(separator + 1);
  if (!providers.includes(provider)) {
    return `unknown model provider "${provider}" in "${spec}"; use one of ${providers.join(', ')} as <provider>:<model>`;
  }
  if (model.trim() === '') return `model "${spec}" names no model; write ${provider}:<model>`;
  return { provider: provider as ModelProvider, model };
}
