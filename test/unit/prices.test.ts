import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PriceTable } from '../../activities/model/prices';

const usage = {
  input_tokens: 1_000_000,
  output_tokens: 100_000,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 200_000,
};

describe('the price table', () => {
  it('prices by the longest matching model prefix', () => {
    const table = PriceTable.load(undefined);
    expect(table.cost('anthropic:claude-sonnet-4-5', usage)).toBeCloseTo(3 + 1.5 + 0.06, 6);
    expect(table.cost('anthropic:claude-opus-4-5-20251101', usage)).toBeCloseTo(5 + 2.5 + 0.1, 6);
    expect(table.cost('anthropic:claude-opus-4-1', usage)).toBeCloseTo(15 + 7.5 + 0.3, 6);
    expect(table.cost('ollama:llama3', usage)).toBe(0);
    expect(table.cost('mystery:model', usage)).toBe(0);
  });

  it('charges nothing for the offline scripted models, but a nominal price for scripted:metered', () => {
    const table = PriceTable.load(undefined);
    expect(table.cost('scripted:demo', usage)).toBe(0);
    expect(table.cost('scripted:typewriter', usage)).toBe(0);
    expect(table.cost('scripted:metered', usage)).toBeCloseTo(3 + 1.5 + 0.06, 6);
  });

  it('lets a file override and extend the built-in prices', async () => {
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'keel-prices-')), 'prices.json');
    await writeFile(
      file,
      JSON.stringify({
        'openai:my-model': { input: 1, output: 2 },
        'anthropic:claude-sonnet-4': { input: 0, output: 0 },
      }),
    );
    const table = PriceTable.load(file);
    expect(table.cost('openai:my-model', usage)).toBeCloseTo(1.2, 6);
    expect(table.cost('anthropic:claude-sonnet-4-5', usage)).toBe(0);
  });

  it('refuses a malformed override file with the model named', async () => {
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'keel-prices-')), 'prices.json');
    await writeFile(file, JSON.stringify({ 'openai:x': { input: 'cheap' } }));
    expect(() => PriceTable.load(file)).toThrow(/openai:x/);
  });
});
