import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { VERSION } from '../build-info';

/**
 * The OpenTelemetry SDK, registered globally: spans go to the OTLP/HTTP exporter in protobuf
 * through a batch processor (the SDK's OTEL_BSP_* and OTEL_EXPORTER_OTLP_* variables apply), W3C
 * trace context is the propagator, and sampling follows OTEL_TRACES_SAMPLER (parent-based, always
 * on by default). No instrumentation and no context manager: every span is opened by hand with
 * its parent given (./spans.ts). Loaded by startTracing only when tracing is on.
 */
export function startProvider(serviceName: string): { shutdown(): Promise<void> } {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.version': VERSION }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return provider;
}
