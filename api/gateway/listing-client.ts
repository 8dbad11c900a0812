/**
 * The client thread listings use. Listing decodes every thread's memo; a thread whose data no
 * configured key opens (its key was removed) would fail the whole list. Here such a memo reads
 * as empty, so the list goes on and that thread shows without its metadata; reading the thread
 * itself still answers `thread_undecryptable`.
 */
import { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { failureConverterPath } from '../../codec/data-converter';
import { PayloadDecryptionError } from '../../codec/errors';

class TolerantCodec implements PayloadCodec {
  constructor(private readonly codecs: readonly PayloadCodec[]) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    for (const codec of this.codecs) payloads = await codec.encode(payloads);
    return payloads;
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.#decodeOne(payload)));
  }

  async #decodeOne(payload: Payload): Promise<Payload> {
    try {
      let decoded = [payload];
      for (const codec of [...this.codecs].reverse()) decoded = await codec.decode(decoded);
      return decoded[0]!;
    } catch (error) {
      if (error instanceof PayloadDecryptionError) return defaultPayloadConverter.toPayload(null);
      throw error;
    }
  }
}

export function listingClient(client: Client): Client {
  return new Client({
    connection: client.connection,
    namespace: client.options.namespace,
    dataConverter: {
      payloadCodecs: [new TolerantCodec(client.options.loadedDataConverter.payloadCodecs)],
      failureConverterPath,
    },
  });
}
