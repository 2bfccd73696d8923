import type { FastifyRequest } from 'fastify';

/**
 * Health and metrics: what load balancers and operators poll. They are neither shed nor bound by
 * the request deadline (readiness has its probes' own bound).
 */
export function isOperationsRoute(request: FastifyRequest): boolean {
  return /^\/(health|metrics)(\/|$)/.test(request.routeOptions.url ?? '');
}
