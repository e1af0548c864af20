import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A minimal OTLP/HTTP collector for tests: accepts POST /v1/traces as protobuf (the exporter's
 * default, `application/x-protobuf`) or JSON (`http/json`), optionally gzip-compressed, and keeps
 * the spans so tests can read names and attributes. /v1/metrics and /v1/logs are accepted and
 * dropped. The protobuf decoder below reads only the fields of opentelemetry-proto's trace
 * messages that tests need.
 */
export type AttributeValue = string | number | boolean | null;

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttributeValue>;
  resource: Record<string, AttributeValue>;
  statusCode: number;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Content types seen, e.g. to assert the default protobuf protocol was used. */
  contentTypes: string[];
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs: number, what: string): Promise<void>;
  close(): Promise<void>;
}

// ---- protobuf wire format -------------------------------------------------------------------
type Field = { no: number; wire: number; varint?: bigint; bytes?: Buffer };

function readVarint(buf: Buffer, pos: { i: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[pos.i++];
    if (byte === undefined) throw new Error('truncated varint');
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return result;
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  const pos = { i: 0 };
  while (pos.i < buf.length) {
    const key = Number(readVarint(buf, pos));
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, varint: readVarint(buf, pos) });
    else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      out.push({ no, wire, bytes: buf.subarray(pos.i, pos.i + size) });
      pos.i += size;
    } else if (wire === 2) {
      const len = Number(readVarint(buf, pos));
      out.push({ no, wire, bytes: buf.subarray(pos.i, pos.i + len) });
      pos.i += len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

function anyValue(buf: Buffer): AttributeValue {
  const f = fields(buf)[0];
  if (!f) return null;
  if (f.no === 1) return f.bytes!.toString('utf8');
  if (f.no === 2) return f.varint !== 0n;
  if (f.no === 3) return Number(BigInt.asIntN(64, f.varint!));
  if (f.no === 4) return f.bytes!.readDoubleLE(0);
  return null; // arrays, kvlists and bytes are not needed by our tests
}

function keyValues(list: Field[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list) {
    const parts = fields(kv.bytes!);
    const key = parts.find((p) => p.no === 1)?.bytes?.toString('utf8');
    const value = parts.find((p) => p.no === 2)?.bytes;
    if (key !== undefined) out[key] = value ? anyValue(value) : null;
  }
  return out;
}

function decodeProtobuf(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of fields(body).filter((f) => f.no === 1)) {
    const rsFields = fields(rs.bytes!);
    const resourceBytes = rsFields.find((f) => f.no === 1)?.bytes;
    const resource = resourceBytes ? keyValues(fields(resourceBytes).filter((f) => f.no === 1)) : {};
    for (const ss of rsFields.filter((f) => f.no === 2)) {
      for (const sp of fields(ss.bytes!).filter((f) => f.no === 2)) {
        const s = fields(sp.bytes!);
        const get = (no: number) => s.find((f) => f.no === no);
        const status = get(15)?.bytes;
        spans.push({
          traceId: get(1)?.bytes?.toString('hex') ?? '',
          spanId: get(2)?.bytes?.toString('hex') ?? '',
          parentSpanId: get(4)?.bytes?.toString('hex') ?? '',
          name: get(5)?.bytes?.toString('utf8') ?? '',
          startNs: get(7)?.bytes?.readBigUInt64LE(0) ?? 0n,
          endNs: get(8)?.bytes?.readBigUInt64LE(0) ?? 0n,
          attributes: keyValues(s.filter((f) => f.no === 9)),
          resource,
          statusCode: status ? Number(fields(status).find((f) => f.no === 3)?.varint ?? 0n) : 0,
        });
      }
    }
  }
  return spans;
}

// ---- JSON -------------------------------------------------------------------------------------
type JsonKv = { key: string; value?: { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number } };
const jsonAttrs = (list: JsonKv[] = []): Record<string, AttributeValue> =>
  Object.fromEntries(
    list.map((kv) => [
      kv.key,
      kv.value?.stringValue ??
        kv.value?.boolValue ??
        (kv.value?.intValue !== undefined ? Number(kv.value.intValue) : (kv.value?.doubleValue ?? null)),
    ]),
  );

function decodeJson(body: Buffer): ReceivedSpan[] {
  const doc = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: Array<{ resource?: { attributes?: JsonKv[] }; scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
  };
  const spans: ReceivedSpan[] = [];
  for (const rs of doc.resourceSpans ?? []) {
    const resource = jsonAttrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          name: String(s.name ?? ''),
          traceId: String(s.traceId ?? ''),
          spanId: String(s.spanId ?? ''),
          parentSpanId: String(s.parentSpanId ?? ''),
          startNs: BigInt(String(s.startTimeUnixNano ?? 0)),
          endNs: BigInt(String(s.endTimeUnixNano ?? 0)),
          attributes: jsonAttrs(s.attributes as JsonKv[]),
          resource,
          statusCode: Number((s.status as { code?: number } | undefined)?.code ?? 0),
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = String(req.headers['content-type'] ?? '');
      try {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        if (req.method === 'POST' && req.url === '/v1/traces') {
          contentTypes.push(type);
          spans.push(...(type.includes('json') ? decodeJson(body) : decodeProtobuf(body)));
        }
        res.writeHead(200, { 'content-type': type.includes('json') ? 'application/json' : 'application/x-protobuf' });
        res.end(type.includes('json') ? '{}' : undefined);
      } catch (err) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 3, message: (err as Error).message }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    async waitFor(predicate, timeoutMs, what) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline)
          throw new Error(
            `timed out after ${timeoutMs} ms waiting for spans: ${what} (have: ${spans.map((s) => s.name).join(', ') || 'none'})`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
