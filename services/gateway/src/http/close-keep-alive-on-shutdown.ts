import type { FastifyInstance } from 'fastify';

/**
 * Lets a graceful close finish promptly. Fastify's close() stops accepting connections, ends idle
 * keep-alive ones and answers requests that arrive meanwhile 503 with `Connection: close`; but a
 * connection whose request is in flight would stay open after its response for keepAliveTimeout
 * (72 s), holding the close (and the process) back. From the start of the close every response
 * carries `Connection: close`, so Node ends each connection once its response is sent and the
 * client opens its next one elsewhere.
 */
export function closeKeepAliveOnShutdown(fastify: FastifyInstance): void {
  let closing = false;
  fastify.addHook('preClose', async () => {
    closing = true;
  });
  fastify.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
}
