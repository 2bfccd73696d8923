import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jsonBodyLimitError, jsonKeyError } from '@app/contracts';
import { DomainError } from '@app/errors';

/**
 * The only request bodies the API reads: JSON (anything else is a 415), UTF-8, uncompressed.
 * An empty body is no body, whatever its Content-Type: HTTP wrappers that always send
 * `application/json` can call the operations whose body is optional without inventing `{}`, and an
 * operation that needs one answers what it answers to a request without a body (the missing
 * fields). Each failure says what is wrong. The limits on any body (nesting, number of elements) are
 * checked on the bytes before they are parsed, so no body can make parsing or validation slow
 * or overflow the stack. JSON.parse keeps a `__proto__` key as an own property, and a body holding
 * one, or a key twice in one object, is refused by name (jsonKeyError).
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
  if (body.length === 0) return undefined;
  if (!isUtf8(body)) throw new DomainError('invalid_json', 'The request body is not valid UTF-8.');
  const limit = jsonBodyLimitError(body);
  if (limit) throw DomainError.validation([limit]);
  // A leading byte order mark is ignored, as RFC 8259 allows.
  const text = body.toString('utf8').replace(/^\uFEFF/, '');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DomainError('invalid_json', 'The request body is not valid JSON.');
  }
  const keyError = jsonKeyError(text);
  if (keyError) throw DomainError.validation([keyError]);
  return value;
}
