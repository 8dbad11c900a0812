/**
 * A local embeddings provider that speaks both real protocols on loopback: Ollama's
 * `POST /api/embed` (`{model, input}` → `{model, embeddings}`) and OpenAI's `POST /v1/embeddings`
 * (`{model, input}` → `{object: 'list', data: [{object: 'embedding', index, embedding}], …}`),
 * `input` a string or a list of them, as both servers take it. Its vectors are by meaning in a
 * tiny way: each word of a concept (coffee, tea, pets, weather) counts on that concept's axis, so
 * "espresso" lies near "coffee" though they share no word.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

const concepts: readonly (readonly string[])[] = [
  ['coffee', 'espresso', 'latte', 'roast', 'cappuccino', 'beans'],
  ['tea', 'matcha', 'chai', 'earl', 'grey', 'oolong'],
  ['pet', 'pets', 'dog', 'puppy', 'cat', 'kitten', 'walks'],
  ['rain', 'sunny', 'weather', 'umbrella', 'forecast'],
];

/** The vector this fake gives `text`: one axis per concept, and a small one for everything else. */
export function fakeEmbedding(text: string): number[] {
  const vector = [...concepts.map(() => 0), 0.1];
  for (const word of text.toLowerCase().split(/[^a-z]+/)) {
    const axis = concepts.findIndex((words) => words.includes(word));
    if (axis >= 0) vector[axis]! += 1;
  }
  return vector;
}

export interface EmbeddingsFake {
  url: string;
  /** Each request's model and inputs, in order. */
  requests: Array<{ path: string; model: string; input: string[]; authorization?: string }>;
  /** Answer every request with this status (a provider down), or undefined to answer. */
  failWith: number | undefined;
  close(): Promise<void>;
}

const bodyOf = async (request: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
};

export async function startEmbeddingsFake(): Promise<EmbeddingsFake> {
  const fake: EmbeddingsFake = { url: '', requests: [], failWith: undefined, close: () => Promise.resolve() };
  const server = createServer((request, response) => {
    void (async () => {
      const answer = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      const path = request.url ?? '';
      if (request.method !== 'POST' || (path !== '/api/embed' && path !== '/v1/embeddings'))
        return answer(404, { error: 'not found' });
      const body = (await bodyOf(request)) as { model?: unknown; input?: unknown };
      const input = typeof body.input === 'string' ? [body.input] : body.input;
      if (
        typeof body.model !== 'string' ||
        !Array.isArray(input) ||
        !input.every((i) => typeof i === 'string')
      )
        return answer(400, { error: 'model and input (a string or strings) are required' });
      fake.requests.push({
        path,
        model: body.model,
        input: input,
        ...(request.headers.authorization === undefined
          ? {}
          : { authorization: request.headers.authorization }),
      });
      if (fake.failWith !== undefined) return answer(fake.failWith, { error: 'unavailable' });
      const vectors = input.map(fakeEmbedding);
      if (path === '/api/embed')
        return answer(200, {
          model: body.model,
          embeddings: vectors,
          total_duration: 1,
          prompt_eval_count: 1,
        });
      return answer(200, {
        object: 'list',
        data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
        model: body.model,
        usage: { prompt_tokens: 1, total_tokens: 1 },
      });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
}
