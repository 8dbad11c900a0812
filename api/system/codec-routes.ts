/**
 * The codec server (Temporal's remote codec protocol), so the Temporal Web UI and `temporal`
 * CLI show conversations decrypted: `POST /codec/decode` and `/codec/encode` take
 * `{"payloads": [{"metadata": {name: base64}, "data": base64}]}` and answer the same shape.
 * Behind the API's authentication like every route; CORS for the Web UI's origin is set up in
 * `app.ts`. The codec is the API client's own, so it holds the same keys as the worker.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Router } from 'express';
import type { Client } from '@temporalio/client';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { PayloadDecryptionError } from '../../codec/errors';
import { operation, route } from '../contract';
import { ApiError } from '../errors';

/** Payloads a UI page asks about at once can be many; each may be up to Temporal's 2 MiB. */
export const maxCodecBodyBytes = 16 * 1024 * 1024;

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
const codecBody = z.object({
  payloads: z.array(z.object({ metadata: z.record(z.string(), base64).optional(), data: base64.optional() })),
});
type JsonPayload = z.infer<typeof codecBody>['payloads'][number];

function fromJson({ metadata, data }: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([name, value]) => [name, Buffer.from(value, 'base64')]),
    ),
    data: Buffer.from(data ?? '', 'base64'),
  };
}

function toJson({ metadata, data }: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([name, value]) => [
        name,
        Buffer.from(value ?? []).toString('base64'),
      ]),
    ),
    data: Buffer.from(data ?? []).toString('base64'),
  };
}

const codecOperation = (direction: 'encode' | 'decode') =>
  operation({
    method: 'post',
    path: `/codec/${direction}`,
    summary:
      direction === 'encode'
        ? "Encrypt payloads (Temporal's remote codec protocol; an X-Namespace header must name this server's namespace)"
        : "Decrypt payloads for the Temporal Web UI (Temporal's remote codec protocol; an X-Namespace header must name this server's namespace)",
    // X-Namespace, when the UI sends it, must name the namespace this codec serves (400
    // otherwise). It is said here rather than declared as a header: its one valid value is
    // configuration, which a static document cannot state, and a fuzzer would read any string as
    // valid.
    body: codecBody,
    responses: { 200: { description: `The payloads, ${direction}d`, schema: codecBody } },
    errors: direction === 'encode' ? [400] : [400, 422],
  });

export const encodePayloads = codecOperation('encode');
export const decodePayloads = codecOperation('decode');
export const codecOperations = [encodePayloads, decodePayloads];

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * The Web UI's own door to the codec, `/codec/ui/<token>/{encode,decode}`: the Temporal UI has no
 * way to send an API token, so with tokens on, `keel up` gives it this endpoint with a secret of
 * its own (decision 0087). Mounted before authentication; 404 when no UI token is configured.
 */
export function codecUiRoutes(codec: Router, uiToken: string | undefined): Router {
  const router = Router();
  const expected = uiToken === undefined ? undefined : digest(uiToken);
  router.use('/codec/ui/:token', (request, _response, next) => {
    if (expected === undefined) {
      next(new ApiError(404, 'route_not_found', `no route for ${request.method} ${request.originalUrl}`));
      return;
    }
    if (!timingSafeEqual(digest(String(request.params.token)), expected)) {
      next(new ApiError(401, 'unauthenticated', 'this codec endpoint needs the Web UI token in its path'));
      return;
    }
    // On to the codec's own routes, as if asked at `/codec/…`.
    request.url = `/codec${request.url}`;
    codec(request, _response, next);
  });
  return router;
}

export function codecRoutes(client: Client, namespace: string): Router {
  const codecs: readonly PayloadCodec[] = client.options.loadedDataConverter.payloadCodecs;
  const router = Router();
  const handle = (spec: typeof encodePayloads, direction: 'encode' | 'decode') =>
    route(router, spec, async (request, response, { body }) => {
      const asked = request.header('x-namespace');
      if (asked !== undefined && asked !== '' && asked !== namespace)
        throw new ApiError(
          400,
          'namespace_mismatch',
          `this codec serves namespace "${namespace}", not "${asked}"`,
          'X-Namespace',
        );
      let payloads = body.payloads.map(fromJson);
      try {
        // Encoding applies the codecs in order, decoding in reverse, as the SDK does.
        if (direction === 'encode') for (const codec of codecs) payloads = await codec.encode(payloads);
        else for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
      } catch (error) {
        if (error instanceof PayloadDecryptionError)
          throw new ApiError(422, 'payload_undecryptable', error.message, 'payloads');
        throw error;
      }
      response.json({ payloads: payloads.map(toJson) });
    });
  handle(encodePayloads, 'encode');
  handle(decodePayloads, 'decode');
  return router;
}
