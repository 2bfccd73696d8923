import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { VERSION } from '../build-info';

/** Requests to these paths (health checks, scrapes) are not traced: they would drown the traces that matter. */
const UNTRACED_PATHS = /^\/(health|metrics)(\/|\?|$)/;

/**
 * The OpenTelemetry SDK, registered globally: spans go to the OTLP/HTTP exporter through a batch
 * processor (the SDK's OTEL_BSP_* and OTEL_EXPORTER_OTLP_* variables apply), W3C trace context is
 * the propagator, sampling follows OTEL_TRACES_SAMPLER (parent-based, always on by default), and
 * http, pg and ioredis are instrumented. Loaded by startTracing only when tracing is on.
 */
export function startProvider(serviceName: string): { shutdown(): Promise<void> } {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.version': VERSION }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.test(request.url ?? ''),
        // The webhooks service sends with undici, not http: its attempts have spans of their own.
        disableOutgoingRequestInstrumentation: true,
      }),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  return provider;
}
