/** The `Model` line of `npm start`'s banner tells which model runs, and why, for each way it is chosen. */
import { modelBanner } from '../../launch/model-banner';
import { parseConfig } from '../../platform/config';

const banner = (env: Record<string, string>) => modelBanner(parseConfig(env, '/tmp'));

describe("keel up's model line", () => {
  it.each([
    [
      'nothing set: the scripted model, and how to get Claude',
      {},
      'scripted:demo — the offline scripted model, not a real model (no KEEL_MODEL, no ANTHROPIC_API_KEY). For Claude: export ANTHROPIC_API_KEY=sk-ant-… and restart.',
    ],
    [
      'a key and no KEEL_MODEL: Claude, because of the key',
      { ANTHROPIC_API_KEY: 'sk-ant-test' },
      'anthropic:claude-sonnet-4-6 (ANTHROPIC_API_KEY is set; KEEL_MODEL picks another model)',
    ],
    [
      'a key, and KEEL_MODEL choosing the scripted model: never "export ANTHROPIC_API_KEY"',
      { ANTHROPIC_API_KEY: 'sk-ant-test', KEEL_MODEL: 'scripted:demo' },
      'scripted:demo (chosen by KEEL_MODEL) — the offline scripted model, not a real model. ANTHROPIC_API_KEY is set: unset KEEL_MODEL to use Claude.',
    ],
    [
      'KEEL_MODEL choosing the scripted model without a key',
      { KEEL_MODEL: 'scripted:typewriter' },
      'scripted:typewriter (chosen by KEEL_MODEL) — the offline scripted model, not a real model. For Claude: export ANTHROPIC_API_KEY=sk-ant-… and set KEEL_MODEL=anthropic:claude-sonnet-4-6 (or unset it).',
    ],
    [
      'KEEL_MODEL choosing Claude without a key: what is missing',
      { KEEL_MODEL: 'anthropic:claude-opus-4-5' },
      'anthropic:claude-opus-4-5 (chosen by KEEL_MODEL) — but ANTHROPIC_API_KEY is not set: its runs fail until it is (export it and restart).',
    ],
    [
      'KEEL_MODEL choosing Ollama',
      { KEEL_MODEL: 'ollama:llama3.2', ANTHROPIC_API_KEY: 'sk-ant-test' },
      'ollama:llama3.2 (chosen by KEEL_MODEL) at http://localhost:11434',
    ],
  ])('%s', (_case, env, expected) => {
    expect(banner(env)).toBe(expected);
  });
});
