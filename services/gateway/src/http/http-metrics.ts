import type { FastifyInstance } from 'fastify';
import { routeTemplate } from './api-routes';
import { Counter, Histogram, Registry } from 'prom-client';
import { LATENCY_BUCKETS, METRIC_PREFIX } from '@app/observability';
import { addResponseRecorder } from './response-records';

/**
 * Counts every response and its latency by method, route template (`/v1/conversations/:id`, never
 * the URL with its ids; `unmatched` for unknown paths) and status, however it ends (a stream its
 * client closed too): a hook of its own, beside the logging and authentication hooks.
 */
export function registerHttpMetrics(fastify: FastifyInstance, registry: Registry): void {
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: `${METRIC_PREFIX}http_requests_total`,
    help: 'HTTP responses sent, by method, route template and status',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: 'Time from receiving a request to sending its response, by method, route template and status',
    labelNames,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  addResponseRecorder(fastify, (request, reply) => {
    const labels = {
      method: request.method,
      route: routeTemplate(request),
      status: reply.statusCode,
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });
}
