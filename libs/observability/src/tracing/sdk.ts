import { ConfigError, loadConfig, type tracingSchema } from '@app/config';
import type * as Provider from './provider';

let provider: { shutdown(): Promise<void> } | undefined;

/**
 * Starts the OpenTelemetry SDK (./provider.ts) when OTEL_EXPORTER_OTLP_ENDPOINT is set
 * (docs/operations.md "Tracing"), and does nothing otherwise: the API's no-op tracer then costs
 * next to nothing, and the SDK is not even loaded (it takes 0.3 s to load, seconds on a busy
 * machine). It runs before the service starts: each service's `tracing.ts` is the first import
 * of its main.ts.
 */
export function startTracing(shape: ReturnType<typeof tracingSchema>): void {
  let settings;
  try {
    settings = loadConfig(shape);
  } catch (error) {
    if (error instanceof ConfigError) return; // the service's own configuration check reports it
    throw error;
  }
  if (!settings.OTEL_EXPORTER_OTLP_ENDPOINT || provider) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when tracing is on (above)
  const { startProvider } = require('./provider') as typeof Provider;
  provider = startProvider(settings.OTEL_SERVICE_NAME);
}

/** Whether startTracing started the SDK: spans are recorded and exported. */
export const tracingOn = (): boolean => provider !== undefined;

/** Exports the spans still buffered and stops the SDK (on a graceful stop). */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  provider = undefined;
  await stopping?.shutdown();
}
