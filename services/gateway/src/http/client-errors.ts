import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { DomainError, ErrorCode, PROBLEM_CONTENT_TYPE, toProblem } from '@app/errors';

/** What Node's HTTP parser found wrong, in words a client can act on. */
const PARSER_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: [
    'headers_too_large',
    'The request line and headers are larger than the server accepts (16 KiB).',
  ],
  HPE_URI_TOO_LONG: ['headers_too_large', 'The request target is longer than the server accepts.'],
  HPE_INVALID_METHOD: ['invalid_request', 'The HTTP method is not one the server knows.'],
  HPE_INVALID_URL: [
    'invalid_request',
    'The request target is not a valid URL: percent-encode spaces, controls and non-ASCII characters.',
  ],
  HPE_INVALID_HEADER_TOKEN: [
    'invalid_request',
    'A header name or value contains a character HTTP does not allow.',
  ],
  HPE_INVALID_TRANSFER_ENCODING: [
    'invalid_request',
    'Transfer-Encoding must be chunked (as the last coding) or absent.',
  ],
  HPE_UNEXPECTED_CONTENT_LENGTH: [
    'invalid_request',
    'Send either Content-Length or Transfer-Encoding, not both.',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request was not received completely in time.'],
};

/**
 * Requests Node's HTTP parser refuses never reach Fastify's routing or hooks. They are answered
 * like every other error, as problem details with an X-Request-Id (then the connection closes:
 * the parser cannot find where the next request would start).
 */
export function clientErrorHandler(logger: Logger) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // The request was answered already (request-framing.ts refuses some as soon as their headers
    // are read, before the parser reaches what is wrong with the body): no second response.
    if ((socket as Socket & { _httpMessage?: ServerResponse })._httpMessage?.headersSent) {
      socket.end();
      return;
    }
    const [code, detail] = PARSER_ERRORS[error.code ?? ''] ?? [
      'invalid_request',
      'The HTTP request could not be parsed.',
    ];
    answerOnSocket(socket, new DomainError(code, detail), logger, { parser_error: error.code });
  };
}

/**
 * CONNECT (a tunnel through a proxy) reaches Node's `connect` event, never Fastify: without a
 * listener Node drops the connection unanswered. This is an API, not a proxy: a 400 like any
 * method it does not know.
 */
export function refuseConnect(logger: Logger) {
  return (_request: IncomingMessage, socket: Duplex): void => {
    answerOnSocket(
      socket,
      new DomainError('invalid_request', 'CONNECT is not served: this is an API, not a proxy.'),
      logger,
      { method: 'CONNECT' },
    );
  };
}

/** A problem document written straight to the socket, which then closes; logged at info (the client's fault). */
function answerOnSocket(socket: Duplex, error: DomainError, logger: Logger, fields: object): void {
  const requestId = randomUUID();
  const problem = toProblem(error, requestId);
  const body = JSON.stringify(problem);
  logger.info(
    { request_id: requestId, status: problem.status, code: error.code, ...fields },
    'request refused by the HTTP parser',
  );
  socket.end(
    [
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}`,
      `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
