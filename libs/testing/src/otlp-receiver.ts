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

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<
        Omit<ReceivedSpan, 'service' | 'attributes' | 'links'> & {
          attributes?: OtlpAttribute[];
          links?: Array<{ traceId: string; spanId: string }>;
        }
      >;
    }>;
  }>;
}

const valueOf = (value: OtlpValue): unknown =>
  value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;

const attributesOf = (attributes: OtlpAttribute[] = []) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 (`POST /v1/traces`, JSON encoding, as
 * @opentelemetry/exporter-trace-otlp-http sends it): services pointed at it with
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
        const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        receiver.record(JSON.parse(body.toString('utf8')) as OtlpExport);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
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

  private record(exported: OtlpExport): void {
    for (const { resource, scopeSpans = [] } of exported.resourceSpans ?? []) {
      const service = String(attributesOf(resource?.attributes)['service.name']);
      for (const { spans = [] } of scopeSpans) {
        for (const span of spans) {
          this.spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
            attributes: attributesOf(span.attributes),
          });
        }
      }
    }
  }
}
