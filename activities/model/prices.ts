/** Turns token counts into dollars with a per-model price table users can override. */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import builtinPrices from './prices.json';
import type { TokenUsage } from './client';

const priceSchema = z.object({
  input: z.number().min(0),
  output: z.number().min(0),
  cache_write: z.number().min(0).default(0),
  cache_read: z.number().min(0).default(0),
});
export type Price = z.infer<typeof priceSchema>;

const tableSchema = z.record(z.string(), z.unknown()).transform((table, context) => {
  const prices: Record<string, Price> = {};
  for (const [model, value] of Object.entries(table)) {
    if (model.startsWith('$')) continue;
    const parsed = priceSchema.safeParse(value);
    if (!parsed.success)
      context.addIssue({
        code: 'custom',
        message: `price for "${model}" is invalid: ${parsed.error.message}`,
      });
    else prices[model] = parsed.data;
  }
  return prices;
});

export class PriceTable {
  readonly #prices: Array<[string, Price]>;

  constructor(prices: Record<string, Price>) {
    // Longest prefix first, so "claude-opus-4-5" wins over "claude-opus-4".
    this.#prices = Object.entries(prices).sort(([a], [b]) => b.length - a.length);
  }

  /** The built-in table, with entries from `overrideFile` (JSON, same shape) taking precedence. */
  static load(overrideFile: string | undefined): PriceTable {
    const builtin = tableSchema.parse(builtinPrices);
    if (overrideFile === undefined) return new PriceTable(builtin);
    const parsed = tableSchema.safeParse(JSON.parse(readFileSync(overrideFile, 'utf8')));
    if (!parsed.success)
      throw new Error(
        `KEEL_PRICES_FILE ${overrideFile}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`,
      );
    return new PriceTable({ ...builtin, ...parsed.data });
  }

  priceOf(model: string): Price | undefined {
    return this.#prices.find(([prefix]) => model.startsWith(prefix))?.[1];
  }

  /** Dollars for `usage` on `model` (`provider:model`); 0 for a model the table does not know. */
  cost(model: string, usage: TokenUsage): number {
    const price = this.priceOf(model);
    if (price === undefined) return 0;
    const dollars =
      (usage.input_tokens * price.input +
        usage.output_tokens * price.output +
        usage.cache_creation_input_tokens * price.cache_write +
        usage.cache_read_input_tokens * price.cache_read) /
      1_000_000;
    return Math.round(dollars * 1e6) / 1e6;
  }
}
