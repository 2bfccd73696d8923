import type { FastifyInstance, FastifyReply } from 'fastify';

/** What a browser may send and read (docs/api-conventions.md, "Browsers (CORS)"). */
const ALLOWED_METHODS = 'GET, POST, PATCH, DELETE';
const ALLOWED_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Accept-Language, Last-Event-ID';
const EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Idempotent-Replayed',
].join(', ');
/** How long a browser may cache a preflight answer. */
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * CORS for the origins in CORS_ORIGINS, answered before routing: a preflight (OPTIONS with
 * `Access-Control-Request-Method`) from a listed origin is a 204 without authentication (browsers
 * never send credentials on it); any other request from a listed origin gets the headers that let
 * the page read the response. An unlisted origin gets no CORS headers (its preflight goes on to the
 * API like any OPTIONS request), so the browser refuses it. API bodies can depend on
 * `Accept-Language` (and, under CORS, on `Origin`): every /v1 response says so in `Vary`.
 */
export function registerCors(fastify: FastifyInstance, origins: readonly string[]): void {
  const allowed = new Set(origins);
  // A callback hook: it runs on every request and rarely has anything to do, so no promise each time.
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.url.startsWith('/v1')) addVary(reply, 'Accept-Language');
    if (allowed.size === 0) return done();
    addVary(reply, 'Origin');
    const origin = request.headers.origin;
    if (origin === undefined || !allowed.has(origin)) return done();
    reply.header('access-control-allow-origin', origin);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      addVary(reply, 'Access-Control-Request-Method');
      addVary(reply, 'Access-Control-Request-Headers');
      reply
        .header('access-control-allow-methods', ALLOWED_METHODS)
        .header('access-control-allow-headers', ALLOWED_HEADERS)
        .header('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS)
        .code(204)
        .send(); // answered here: the request goes no further (done is not called)
      return;
    }
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    done();
  });
}

/** Adds a field to `Vary` once, keeping what is there. */
function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  const fields = typeof current === 'string' && current !== '' ? current.split(/\s*,\s*/) : [];
  if (fields.some((existing) => existing.toLowerCase() === field.toLowerCase())) return;
  reply.header('vary', [...fields, field].join(', '));
}
