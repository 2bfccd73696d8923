import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  preValidationHookHandler,
  RouteOptions,
} from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { DomainError } from '@app/errors';
import { sendProblem } from './problem.filter';
import { queryParametersHook } from './query-parameters';

const API_PREFIX = '/v1';
/** The catch-all route of api paths no endpoint serves. */
const UNMATCHED = `${API_PREFIX}/*`;
const isApiRoute = (url: string) => url === API_PREFIX || url.startsWith(`${API_PREFIX}/`);
const hooks = <T>(existing: T | T[] | undefined): T[] =>
  existing === undefined ? [] : ([] as T[]).concat(existing);

/** An absent body is an empty object, so the schema names the fields a request left out. */
const emptyBodyIsEmptyObject: preValidationHookHandler = (request, _reply, done) => {
  if (request.body === undefined) request.body = {};
  done();
};

/**
 * Makes every route under /v1 an API route, as it is registered: authentication and the rate
 * limit (`admission`) run first on each of them, then the query parameters are resolved and an
 * absent body defaulted before the route's schemas validate them. A catch-all route under /v1
 * answers what no route serves, after the same admission: 405 with `Allow` when the path exists
 * for other methods, else 404. Call before the application registers its routes.
 */
export function registerApiRoutes(fastify: FastifyInstance, admission: onRequestAsyncHookHandler): void {
  const served = FindMyWay();
  fastify.addHook('onRoute', (route: RouteOptions) => {
    if (!isApiRoute(route.url)) return;
    route.onRequest = [admission, ...hooks(route.onRequest)];
    const endpoint = route.config?.endpoint;
    if (!endpoint) return;
    const prepare: preValidationHookHandler[] = [];
    if (endpoint.query) prepare.push(queryParametersHook({ ...endpoint, query: endpoint.query }));
    if (endpoint.body) prepare.push(emptyBodyIsEmptyObject);
    route.preValidation = [...prepare, ...hooks(route.preValidation)];
    for (const method of hooks(route.method)) served.on(method as HTTPMethod, route.url, () => undefined);
  });
  const answerUnmatched = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0];
    const allowed = fastify.supportedMethods.filter((method) => served.find(method as HTTPMethod, path));
    if (allowed.length === 0) {
      return sendProblem(
        request,
        reply,
        new DomainError('route_not_found', `No endpoint ${request.method} ${path.slice(0, 200)}.`),
      );
    }
    reply.header('allow', allowed.join(', '));
    return sendProblem(
      request,
      reply,
      new DomainError(
        'method_not_allowed',
        `${request.method} is not allowed here; use ${allowed.join(', ')}.`,
      ),
    );
  };
  for (const url of [API_PREFIX, UNMATCHED]) {
    fastify.route({ method: fastify.supportedMethods, url, handler: answerUnmatched });
  }
}

/** A request's route template for logs and metrics (`/v1/conversations/:id`), or `unmatched`. */
export function routeTemplate(request: FastifyRequest): string {
  const url = request.routeOptions.url;
  return url === undefined || url === UNMATCHED || url === API_PREFIX ? 'unmatched' : url;
}

/**
 * A URL Fastify cannot even decode (an undecodable or overlong path segment) is answered here,
 * before any route: such a segment can only be a malformed id, so after the same admission as
 * any API request it is the 404 of any other malformed id.
 */
export function undecodableUrl(admission: () => onRequestAsyncHookHandler | undefined) {
  return (_error: Error, request: FastifyRequest, reply: FastifyReply): void => {
    const respond = async () => {
      const admit = admission();
      if (admit && isApiRoute(request.url.split('?')[0])) await admit.call(request.server, request, reply);
      if (!reply.sent)
        sendProblem(
          request,
          reply,
          new DomainError('not_found', 'Nothing exists at this path: its id is malformed.'),
        );
    };
    respond().catch(() => {
      if (!reply.sent)
        sendProblem(request, reply, new DomainError('internal_error', 'An unexpected error occurred.'));
    });
  };
}
