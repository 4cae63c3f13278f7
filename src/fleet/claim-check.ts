import { createHash } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { ClientInterceptors, Connection } from '@temporalio/client';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { openPayloadStore, payloadStoreLocation } from '../stores/open';
import type { StoreConfig } from '../stores/open';
import type { PayloadStore } from '../stores/payloads/payload-store';

/** The encoding of a payload that history holds only a reference to. */
export const CLAIM_CHECK_ENCODING = 'binary/fairway-claim-check';

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** A payload's size as history would hold it: its data and its metadata. */
function sizeOf(p: Payload): number {
  let n = p.data?.byteLength ?? 0;
  for (const [k, v] of Object.entries(p.metadata ?? {})) n += k.length + (v?.byteLength ?? 0);
  return n;
}

/** A payload as bytes: a 4-byte length, its metadata as JSON (values base64), then its data. */
function serialize(p: Payload): Uint8Array {
  const meta = Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [
      k,
      Buffer.from(v ?? new Uint8Array()).toString('base64'),
    ]),
  );
  const head = utf8.encode(JSON.stringify(meta));
  const data = p.data ?? new Uint8Array();
  const out = new Uint8Array(4 + head.byteLength + data.byteLength);
  new DataView(out.buffer).setUint32(0, head.byteLength);
  out.set(head, 4);
  out.set(data, 4 + head.byteLength);
  return out;
}

function deserialize(bytes: Uint8Array): Payload {
  const headLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  const meta = JSON.parse(text.decode(bytes.subarray(4, 4 + headLength))) as Record<string, string>;
  return {
    metadata: Object.fromEntries(
      Object.entries(meta).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]),
    ),
    data: bytes.slice(4 + headLength),
  };
}

/**
 * A claim-check codec: a payload over `thresholdBytes` is stored in the payload store under the
 * SHA-256 of its bytes, and history carries only `{ key, size }` with {@link CLAIM_CHECK_ENCODING};
 * decoding fetches it back. Smaller payloads pass unchanged, so tools without the codec (the
 * Temporal CLI, the UI) still read them. `where` names the store in errors.
 */
export function claimCheckCodec(
  store: PayloadStore,
  thresholdBytes: number,
  where = 'the payload store',
): PayloadCodec {
  return {
    async encode(payloads) {
      return Promise.all(
        payloads.map(async (p) => {
          const size = sizeOf(p);
          if (size <= thresholdBytes) return p;
          const bytes = serialize(p);
          const key = createHash('sha256').update(bytes).digest('hex');
          await store.put(key, bytes);
          return {
            metadata: { encoding: utf8.encode(CLAIM_CHECK_ENCODING) },
            data: utf8.encode(JSON.stringify({ key, size })),
          };
        }),
      );
    },
    async decode(payloads) {
      return Promise.all(
        payloads.map(async (p) => {
          const encoding = p.metadata?.encoding;
          if (!encoding || text.decode(encoding) !== CLAIM_CHECK_ENCODING) return p;
          const { key } = JSON.parse(text.decode(p.data ?? new Uint8Array())) as { key: string };
          const bytes = await store.get(key);
          if (!bytes)
            throw new Error(
              `claim-checked payload ${key} is missing from ${where}: every client and worker must share one payload store (DATABASE_URL, or DATA_DIR on one host)`,
            );
          return deserialize(bytes);
        }),
      );
    },
  };
}

/**
 * The keys of the claim-checked payloads anywhere in `value` (a history, an event, a payload list),
 * as they stand encoded: objects whose `metadata.encoding` is {@link CLAIM_CHECK_ENCODING}.
 */
export function claimCheckKeys(value: unknown, out = new Set<string>(), depth = 0): Set<string> {
  if (value === null || typeof value !== 'object' || depth > 64 || ArrayBuffer.isView(value)) return out;
  const p = value as Payload;
  const encoding = p.metadata?.encoding;
  if (encoding instanceof Uint8Array && text.decode(encoding) === CLAIM_CHECK_ENCODING && p.data) {
    try {
      const { key } = JSON.parse(text.decode(p.data)) as { key?: unknown };
      if (typeof key === 'string') out.add(key);
    } catch {
      /* not a reference this codec wrote */
    }
    return out;
  }
  for (const v of Object.values(value)) claimCheckKeys(v, out, depth + 1);
  return out;
}

/** The data converter every Temporal client and worker of Fairway uses, with the store it holds open. */
export interface FairwayDataConverter {
  dataConverter: { payloadCodecs: PayloadCodec[] };
  /** The payload store behind it (retention: `prunePayloads`). */
  store: PayloadStore;
  close(): Promise<void>;
}

/** Opens the payload store of `config` and builds the claim-check data converter over it. */
export async function openDataConverter(
  config: StoreConfig & { claimCheckBytes: number },
): Promise<FairwayDataConverter> {
  const location = payloadStoreLocation(config);
  const store = await openPayloadStore(location);
  const where = config.databaseUrl ? 'the payload store in DATABASE_URL' : `the payload store ${location}`;
  return {
    dataConverter: { payloadCodecs: [claimCheckCodec(store, config.claimCheckBytes, where)] },
    store,
    close: () => store.close(),
  };
}

/**
 * A Temporal client of the fleet's namespace over `connection`, with the claim-check converter it
 * holds open (and tracing's interceptors, when given).
 */
export async function openFleetClient(
  connection: Connection,
  config: StoreConfig & { claimCheckBytes: number; temporal: { namespace: string } },
  interceptors?: ClientInterceptors,
): Promise<{ client: Client; payloads: PayloadStore; close(): Promise<void> }> {
  const converter = await openDataConverter(config);
  const client = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: converter.dataConverter,
    ...(interceptors ? { interceptors } : {}),
  });
  return { client, payloads: converter.store, close: () => converter.close() };
}
