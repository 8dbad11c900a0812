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

/**
 * Model families whose provider a bare name (no `provider:`) says unambiguously, as LangGraph
 * deployments name models in `config.configurable.model`. Anything else (an Ollama or vLLM name
 * such as `llama3.2`) could be served by more than one provider, so it must name its provider.
 */
const families: ReadonlyArray<{ pattern: RegExp; provider: ModelProvider }> = [
  { pattern: /^claude-\S+$/, provider: ModelProvider.anthropic },
  { pattern: /^(?:gpt-|chatgpt-)\S+$/, provider: ModelProvider.openai },
  { pattern: /^o[1-9](?:-\S+)?$/, provider: ModelProvider.openai },
];

/** The pattern of a model as a request may name it: `provider:model`, or a bare name of a family above. */
export const modelNamePattern = `^(?:(?:${providers.join('|')}):.*\\S|${families
  .map(({ pattern }) => pattern.source.slice(1, -1))
  .join('|')})$`;

/**
 * `provider:model` for a model a request names: as given when it names its provider, else the
 * provider its family says (`claude-sonnet-4-5` → `anthropic:claude-sonnet-4-5`, `gpt-4o` →
 * `openai:gpt-4o`); unchanged when neither (parseModelSpec then says what is wrong).
 */
export function qualifyModel(name: string): string {
  const separator = name.indexOf(':');
  if (separator !== -1 && providers.includes(name.slice(0, separator))) return name;
  const family = families.find(({ pattern }) => pattern.test(name));
  return family === undefined ? name : `${family.provider}:${name}`;
}
