import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { REQUEST_ID_PATTERN } from '@app/contracts';

const CLIENT_REQUEST_ID = new RegExp(REQUEST_ID_PATTERN);

/** Keeps a well-formed client `X-Request-Id` (so a caller can trace its own id), else makes one. */
export function requestIdFor(request: IncomingMessage): string {
  const supplied = request.headers['x-request-id'];
  return typeof supplied === 'string' && CLIENT_REQUEST_ID.test(supplied) ? supplied : randomUUID();
}

/** Every response carries its request's id (docs/errors.md), whatever answers it. */
export function registerRequestIdHeader(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
}
