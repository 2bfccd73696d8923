import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { jsonBodyLimitError } from '@app/contracts';
import { DomainError } from '@app/errors';

/**
 * The only request bodies the API reads: JSON (anything else is a 415), UTF-8, uncompressed.
 * Each failure says what is wrong. The limits on any body (nesting, number of elements) are
 * checked on the bytes before they are parsed, so no body can make parsing or validation slow
 * or overflow the stack.
 */
export function registerJsonBodies(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(request, body as Buffer));
    } catch (error) {
      done(error as DomainError, undefined);
    }
  });
}

function parseJsonBody(request: FastifyRequest, body: Buffer): unknown {
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    throw new DomainError(
      'unsupported_media_type',
      `Content-Encoding ${encoding.slice(0, 40)} is not supported: send the JSON body uncompressed.`,
    );
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i
    .exec(request.headers['content-type'] ?? '')?.[1]
    .toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new DomainError(
      'unsupported_media_type',
      `JSON bodies are UTF-8; charset ${charset.slice(0, 40)} is not supported.`,
    );
  }
  if (!isUtf8(body)) throw new DomainError('invalid_json', 'The request body is not valid UTF-8.');
  const limit = jsonBodyLimitError(body);
  if (limit) throw DomainError.validation([limit]);
  let value: unknown;
  try {
    value = secureJson.parse(body.toString('utf8'), undefined, {
      protoAction: 'error',
      constructorAction: 'error',
    });
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new DomainError('invalid_json', 'The request body is not valid JSON.');
    throw DomainError.validation([
      { field: 'body', message: 'must not use __proto__ or constructor.prototype as keys' },
    ]);
  }
  return value;
}
