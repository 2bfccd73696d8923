/**
 * The first import of main.ts: the OpenTelemetry SDK starts before the service does
 * (docs/operations.md "Tracing").
 */
import { tracingSchema } from '@app/config';
import { startTracing } from '@app/observability';

startTracing(tracingSchema('conversations'));
