/**
 * The Store's embeddings (decision 0451): texts to vectors through Ollama's `POST /api/embed` or
 * an OpenAI-compatible `POST /v1/embeddings`, and the cosine similarity a search ranks by.
 */
import type { EmbeddingsConfig } from '../platform/config';
import { StoreError } from './errors';

/** Texts to vectors, in order. */
export interface Embedder {
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
}

/** How long one embeddings request may take: a put or a search waits on it. */
const requestTimeoutMs = 30_000;
/** Characters of one text sent: an item's indexed text is a memory, not a book. */
export const maxEmbeddedChars = 8_000;

const unavailable = (config: EmbeddingsConfig, why: string) =>
  new StoreError(
    503,
    'embeddings_unavailable',
    `the embeddings provider (${config.provider}:${config.model}) ${why}`,
  );

const isVector = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((n) => typeof n === 'number' && Number.isFinite(n));

/** The vectors in a provider's answer, in the order of the texts sent. */
function vectorsOf(config: EmbeddingsConfig, body: unknown, count: number): number[][] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  let vectors: unknown[] | undefined;
  if (config.provider === 'ollama') {
    const { embeddings } = body as { embeddings?: unknown };
    vectors = Array.isArray(embeddings) ? embeddings : undefined;
  } else {
    const { data } = body as { data?: unknown };
    if (Array.isArray(data))
      vectors = [...(data as Array<{ index?: number; embedding?: unknown }>)]
        .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
        .map((entry) => entry.embedding);
  }
  if (vectors?.length !== count || !vectors.every(isVector)) return undefined;
  return vectors;
}

export function createEmbedder(config: EmbeddingsConfig): Embedder {
  const base = config.url.replace(/\/+$/, '');
  const url = config.provider === 'ollama' ? `${base}/api/embed` : `${base}/embeddings`;
  return {
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const input = texts.map((text) => text.slice(0, maxEmbeddedChars));
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(config.apiKey === undefined ? {} : { authorization: `Bearer ${config.apiKey}` }),
          },
          body: JSON.stringify({ model: config.model, input }),
          signal: AbortSignal.any([AbortSignal.timeout(requestTimeoutMs), ...(signal ? [signal] : [])]),
        });
      } catch (error) {
        throw unavailable(
          config,
          `did not answer: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      if (!response.ok) throw unavailable(config, `answered ${response.status}`);
      const vectors = vectorsOf(config, await response.json().catch(() => undefined), texts.length);
      if (vectors === undefined) throw unavailable(config, 'answered without one vector per text');
      return vectors;
    },
  };
}

/** Cosine similarity, from -1 to 1; 0 for a zero vector or vectors of other lengths. */
export function cosine(left: Float32Array, right: Float32Array): number {
  if (left.length !== right.length) return 0;
  let dot = 0;
  let leftNorm = 0;
  let rightNorm = 0;
  for (let index = 0; index < left.length; index++) {
    dot += left[index]! * right[index]!;
    leftNorm += left[index]! ** 2;
    rightNorm += right[index]! ** 2;
  }
  return leftNorm === 0 || rightNorm === 0 ? 0 : dot / Math.sqrt(leftNorm * rightNorm);
}
