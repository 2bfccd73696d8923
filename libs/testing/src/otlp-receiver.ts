import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A span as an OTLP/HTTP exporter sent it, with the service that sent it. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  links: Array<{ traceId: string; spanId: string }>;
  attributes: Record<string, unknown>;
}

interface Field {
  /** The field's number in its message. */
  no: number;
  /** A varint's value, or the bytes of a length-delimited or fixed-size field. */
  value: number | Buffer;
}

/** The fields of one protobuf message, in order (the wire format: a tag, then the value). */
function* fieldsOf(message: Buffer): Generator<Field> {
  let at = 0;
  const varint = () => {
    let result = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = message[at++];
      result += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return result;
    }
  };
  const bytes = (length: number) => message.subarray(at, (at += length));
  while (at < message.length) {
    const tag = varint();
    const no = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0:
        yield { no, value: varint() };
        break;
      case 1:
        yield { no, value: bytes(8) };
        break;
      case 2:
        yield { no, value: bytes(varint()) };
        break;
      case 5:
        yield { no, value: bytes(4) };
        break;
      default:
        throw new Error(`unsupported protobuf wire type ${tag & 7}`);
    }
  }
}

/** The values of field `no` (repeated or not) of `message`, as bytes. */
const messages = (message: Buffer, no: number): Buffer[] =>
  [...fieldsOf(message)].filter((field) => field.no === no).map((field) => field.value as Buffer);

const hex = (message: Buffer, no: number) => messages(message, no)[0]?.toString('hex') ?? '';
const text = (message: Buffer, no: number) => messages(message, no)[0]?.toString('utf8') ?? '';

/** AnyValue: string 1, bool 2, int 3, double 4 (what the services' attributes hold). */
function anyValue(value: Buffer): unknown {
  for (const { no, value: field } of fieldsOf(value)) {
    if (no === 1) return (field as Buffer).toString('utf8');
    if (no === 2) return field === 1;
    if (no === 3) return field;
    if (no === 4) return (field as Buffer).readDoubleLE();
  }
  return undefined;
}

/** Repeated KeyValue (key 1, value 2) at field `no`. */
const attributesOf = (message: Buffer, no: number): Record<string, unknown> =>
  Object.fromEntries(
    messages(message, no).map((keyValue) => [text(keyValue, 1), anyValue(messages(keyValue, 2)[0])]),
  );

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 (`POST /v1/traces`, protobuf encoding, as
 * @opentelemetry/exporter-trace-otlp-proto sends it): services pointed at it with
 * OTEL_EXPORTER_OTLP_ENDPOINT export their spans here, and the test reads them.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = http.createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.method !== 'POST' || request.url !== '/v1/traces') {
          response.writeHead(404).end();
          return;
        }
        const raw = Buffer.concat(chunks);
        receiver.record(request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw);
        // An empty ExportTraceServiceResponse: nothing rejected.
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /**
   * An ExportTraceServiceRequest: resource_spans 1 { resource 1 { attributes 1 }, scope_spans 2
   * { spans 2 } }; a span's fields: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6,
   * attributes 9, links 13 { trace_id 1, span_id 2 }.
   */
  private record(exported: Buffer): void {
    for (const resourceSpans of messages(exported, 1)) {
      const [resource] = messages(resourceSpans, 1);
      const service = String(resource ? attributesOf(resource, 1)['service.name'] : undefined);
      for (const scopeSpans of messages(resourceSpans, 2)) {
        for (const span of messages(scopeSpans, 2)) {
          const kind = [...fieldsOf(span)].find((field) => field.no === 6)?.value;
          this.spans.push({
            service,
            traceId: hex(span, 1),
            spanId: hex(span, 2),
            parentSpanId: hex(span, 4),
            name: text(span, 5),
            kind: typeof kind === 'number' ? kind : 0,
            links: messages(span, 13).map((link) => ({ traceId: hex(link, 1), spanId: hex(link, 2) })),
            attributes: attributesOf(span, 9),
          });
        }
      }
    }
  }
}
