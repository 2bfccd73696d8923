import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { VERSION } from '../build-info';

/** Every metric of ours starts with this; process and Node.js metrics keep their standard names. */
export const METRIC_PREFIX = 'cms_';

/** Seconds; from a fast RabbitMQ round trip (~1 ms) to a slow request (10 s). */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * One registry per running service (never prom-client's global one): tests run several services
 * and gateways in one process, and each must count only its own work. Process metrics (CPU,
 * memory, event-loop lag, GC) are the process's, so in-process neighbours report the same ones.
 * `cms_build_info{version}` (always 1) tells which release answers, as replicas of two releases
 * serve side by side during a rolling upgrade.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: `${METRIC_PREFIX}build_info`,
    help: 'The release this process runs (always 1)',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: VERSION }, 1);
  return registry;
}
