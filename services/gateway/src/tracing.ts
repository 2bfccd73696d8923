/**
 * The first import of main.ts: the OpenTelemetry SDK must patch http, pg and ioredis before
 * anything loads them (docs/operations.md "Tracing").
 */
import { tracingSchema } from '@app/config';
import { startTracing } from '@app/observability';

startTracing(tracingSchema('gateway'));
