/**
 * The `Model` line of `keel up`'s banner: which model threads get by default, and why — the
 * variable that chose it — plus what is missing for it to work. It never tells a user to set
 * what is already set.
 */
import { defaultAnthropicModel, type KeelConfig } from '../platform/config';

export function modelBanner(config: Pick<KeelConfig, 'model' | 'providers'>): string {
  const model = config.model.default;
  const provider = model.slice(0, model.indexOf(':'));
  const { anthropicApiKey, openaiApiKey, openaiBaseUrl, ollamaHost } = config.providers;
  if (!config.model.explicit) {
    if (provider === 'anthropic')
      return `${model} (ANTHROPIC_API_KEY is set; KEEL_MODEL picks another model)`;
    return (
      `${model} — the offline scripted model, not a real model (no KEEL_MODEL, no ANTHROPIC_API_KEY). ` +
      'For Claude: export ANTHROPIC_API_KEY=sk-ant-… and restart.'
    );
  }
  const chosen = `${model} (chosen by KEEL_MODEL)`;
  switch (provider) {
    case 'scripted':
      return anthropicApiKey === undefined
        ? `${chosen} — the offline scripted model, not a real model. For Claude: export ANTHROPIC_API_KEY=sk-ant-… and set KEEL_MODEL=${defaultAnthropicModel} (or unset it).`
        : `${chosen} — the offline scripted model, not a real model. ANTHROPIC_API_KEY is set: unset KEEL_MODEL to use Claude.`;
    case 'anthropic':
      return anthropicApiKey === undefined
        ? `${chosen} — but ANTHROPIC_API_KEY is not set: its runs fail until it is (export it and restart).`
        : chosen;
    case 'openai':
      return openaiApiKey === undefined && openaiBaseUrl === undefined
        ? `${chosen} — but neither OPENAI_API_KEY nor OPENAI_BASE_URL is set: its runs fail until one is.`
        : `${chosen}${openaiBaseUrl === undefined ? '' : ` at ${openaiBaseUrl}`}`;
    case 'ollama':
      return `${chosen} at ${ollamaHost}`;
    default:
      return chosen;
  }
}
