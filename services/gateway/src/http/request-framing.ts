import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DomainError } from '@app/errors';
import { refuseConnect } from './client-errors';
import { sendProblem } from './problem.filter';

/**
 * What Node's HTTP parser lets through but HTTP (RFC 9110, 9112) or the API refuses, checked
 * before anything else reads the request (authentication included: a request whose framing is
 * in doubt is not served), each a problem document with an X-Request-Id, and the connection
 * closed, since where the next request would start is in doubt too:
 * - a version other than HTTP/1.x (`HTTP/2.0` on a text request line is not HTTP/2);
 * - no Host header in HTTP/1.1, or more than one in any version;
 * - a Transfer-Encoding other than `chunked` alone (the parser takes `gzip, chunked` and hands
 *   on the body still gzipped);
 * - an `Expect` other than `100-continue` (417, instead of Node's bare one);
 * - CONNECT, which Node hands to its `connect` event (client-errors.ts answers it).
 *
 * Node answers a missing Host and an unknown expectation itself with a bare response unless the
 * server is created with `requireHostHeader: false` and has a `checkExpectation` listener: both
 * are set here (`SERVER_OPTIONS` and the listener).
 */
export const SERVER_OPTIONS = { requireHostHeader: false } as const;

export function registerRequestFraming(fastify: FastifyInstance, logger: Logger): void {
  fastify.server.on('connect', refuseConnect(logger));
  // Into Fastify like any request, so the hook below answers it (logged and counted as usual).
  fastify.server.on('checkExpectation', (request, response) =>
    fastify.server.emit('request', request, response),
  );
  fastify.addHook('onRequest', (request, reply, done) => {
    const problem = framingProblem(request);
    if (!problem) return done();
    reply.header('connection', 'close');
    sendProblem(request, reply, problem);
  });
}

function framingProblem(request: FastifyRequest): DomainError | undefined {
  const { httpVersionMajor, httpVersionMinor, rawHeaders, headers } = request.raw;
  if (httpVersionMajor !== 1) {
    return new DomainError(
      'invalid_request',
      `HTTP/${httpVersionMajor}.${httpVersionMinor} is not served on a text request line; send HTTP/1.1.`,
    );
  }
  const hosts = headerCount(rawHeaders, 'host');
  if (hosts > 1 || (hosts === 0 && httpVersionMinor >= 1)) {
    return new DomainError('invalid_request', 'Send exactly one Host header.');
  }
  const transferEncoding = headers['transfer-encoding'];
  if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
    return new DomainError(
      'invalid_request',
      'Transfer-Encoding must be chunked alone or absent; send the body uncompressed.',
    );
  }
  const expectation = headers.expect;
  if (expectation !== undefined && expectation.trim().toLowerCase() !== '100-continue') {
    return new DomainError('expectation_failed', 'The only expectation served is 100-continue.');
  }
  return undefined;
}

/** How many times a header was sent (Node keeps the first Host and joins repeated Transfer-Encodings). */
export function headerCount(rawHeaders: string[], lowerCaseName: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i].length === lowerCaseName.length && rawHeaders[i].toLowerCase() === lowerCaseName)
      count++;
  return count;
}
