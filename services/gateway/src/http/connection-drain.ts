import type { FastifyInstance } from 'fastify';

/** Whether the gateway has begun its graceful stop: readiness reports it (see gateway-readiness.ts). */
export class DrainState {
  draining = false;
}

/**
 * The HTTP half of a graceful stop; returns `drain`, to be awaited before the app closes.
 *
 * Fastify's close() stops accepting connections and ends idle keep-alive ones (requests arriving
 * meanwhile on open connections are still served: return503OnClosing is off); but a connection
 * whose request is in flight would stay open after its response for keepAliveTimeout (72 s),
 * holding the close (and the process) back. So once `drain` is called every response carries
 * `Connection: close`: Node ends each connection after its response and the client opens its
 * next one elsewhere.
 *
 * `drain` then waits SHUTDOWN_DRAIN_MS while still serving. A client busy on a keep-alive
 * connection is told to reconnect by its next response, instead of finding the connection closed
 * under a request it was just sending (which it could not safely retry unless idempotent); a load
 * balancer that polls /health/ready (503 from the moment `drain` is called) gets time to notice
 * the replica leaving.
 */
export function registerConnectionDrain(
  fastify: FastifyInstance,
  drainMs: number,
  state: DrainState,
): () => Promise<void> {
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (state.draining) reply.header('connection', 'close');
    done(null, payload);
  });
  return async () => {
    state.draining = true;
    if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
  };
}
