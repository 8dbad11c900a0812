import { createModelClients } from '../../activities/model/clients';
import { TextToolsFallback } from '../../activities/model/text-tools';
import { ConfigError, parseConfig } from '../../platform/config';

describe('provider configuration', () => {
  it('defaults the stall timeout to 90 s and reads KEEL_MODEL_STALL_TIMEOUT_S', () => {
    expect(parseConfig({}, '/').providers.stallTimeoutS).toBe(90);
    expect(parseConfig({ KEEL_MODEL_STALL_TIMEOUT_S: '2.5' }, '/').providers.stallTimeoutS).toBe(2.5);
    expect(() => parseConfig({ KEEL_MODEL_STALL_TIMEOUT_S: '0' }, '/')).toThrow(/KEEL_MODEL_STALL_TIMEOUT_S/);
  });

  it('reads KEEL_TOOLLESS_MODELS as a comma-separated list of model specs', () => {
    expect(parseConfig({}, '/').providers.toollessModels).toEqual([]);
    expect(
      parseConfig({ KEEL_TOOLLESS_MODELS: ' ollama:gemma:2b, openai:tiny ,' }, '/').providers.toollessModels,
    ).toEqual(['ollama:gemma:2b', 'openai:tiny']);
  });

  it('takes KEEL_MODEL=ollama alone to mean the model OLLAMA_MODEL names', () => {
    expect(parseConfig({ KEEL_MODEL: 'ollama', OLLAMA_MODEL: 'qwen3:8b' }, '/').model).toEqual({
      default: 'ollama:qwen3:8b',
      explicit: true,
    });
    expect(() => parseConfig({ KEEL_MODEL: 'ollama' }, '/')).toThrow(ConfigError);
    expect(() => parseConfig({ KEEL_MODEL: 'ollama' }, '/')).toThrow(/needs OLLAMA_MODEL/);
  });

  it('defaults OLLAMA_HOST to the local server', () => {
    expect(parseConfig({}, '/').providers.ollamaHost).toBe('http://localhost:11434');
  });
});

describe('choosing a model client', () => {
  it('refuses openai:<model> with neither OPENAI_API_KEY nor OPENAI_BASE_URL, naming both', () => {
    const clients = createModelClients(parseConfig({}, '/').providers);
    expect(() => clients({ provider: 'openai', model: 'gpt-4.1' })).toThrow(
      /OPENAI_API_KEY \(or OPENAI_BASE_URL/,
    );
  });

  it('builds an OpenAI-compatible client for a local server without a key, and one Ollama client', () => {
    const clients = createModelClients(
      parseConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:1234/v1' }, '/').providers,
    );
    expect(clients({ provider: 'openai', model: 'local' })).toBeDefined();
    const ollama = clients({ provider: 'ollama', model: 'llama3.2' });
    expect(clients({ provider: 'ollama', model: 'qwen3:8b' })).toBe(ollama);
    expect(ollama).toBeInstanceOf(TextToolsFallback);
  });
});
