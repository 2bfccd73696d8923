import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dump } from 'js-yaml';
import { AnalyticsEndpoints } from '../analytics/analytics.endpoints';
import { ConversationEndpoints } from '../conversations/conversations.endpoints';
import { EventEndpoints } from '../events/events.endpoints';
import { WebhookEndpoints } from '../webhooks/webhooks.endpoints';
import { openApiDocument } from './openapi-document';

/** Every operation of the public API, in the order the document lists them. */
export const API_ENDPOINTS = [
  ...Object.values(ConversationEndpoints),
  ...Object.values(AnalyticsEndpoints),
  ...Object.values(WebhookEndpoints),
  ...Object.values(EventEndpoints),
];

/** A response body prepared once at start-up, gzipped too for clients that accept it. */
interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
}

const asset = (type: string, body: string | Buffer): Asset => {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  return { type, body: bytes, gzipped: gzipSync(bytes, { level: 9 }) };
};

function send(request: FastifyRequest, reply: FastifyReply, served: Asset, cacheSeconds: number) {
  const gzip = /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
  return reply
    .header('content-type', served.type)
    .header('cache-control', `public, max-age=${cacheSeconds}`)
    .header('vary', 'Accept-Encoding')
    .header('content-encoding', gzip ? 'gzip' : 'identity')
    .send(gzip ? served.gzipped : served.body);
}

const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const swaggerUiFile = (name: string) => readFileSync(path.join(SWAGGER_UI, name));

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Conversation Messaging API</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="api"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

/** Swagger UI on the document; "Try it out" sends requests to this gateway with the key from "Authorize". */
const DOCS_INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#api',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  persistAuthorization: true,
  displayOperationId: true,
});`;

/**
 * The OpenAPI document at /openapi.json and /openapi.yaml (UTF-8, declared), and Swagger UI at
 * /docs from swagger-ui-dist's own files, gzipped (about 0.5 MB instead of 2.6 MB). Not under /v1:
 * neither authenticated nor rate limited.
 */
export function serveApiDocs(fastify: FastifyInstance): void {
  const document = openApiDocument(API_ENDPOINTS);
  const served: Record<string, Asset> = {
    '/openapi.json': asset('application/json; charset=utf-8', JSON.stringify(document)),
    '/openapi.yaml': asset(
      'application/yaml; charset=utf-8',
      dump(document, { noRefs: true, lineWidth: -1 }),
    ),
    '/docs': asset('text/html; charset=utf-8', DOCS_PAGE),
    '/docs/init.js': asset('text/javascript; charset=utf-8', DOCS_INIT),
    '/docs/swagger-ui.css': asset('text/css; charset=utf-8', swaggerUiFile('swagger-ui.css')),
    '/docs/swagger-ui-bundle.js': asset(
      'text/javascript; charset=utf-8',
      swaggerUiFile('swagger-ui-bundle.js'),
    ),
  };
  for (const [url, content] of Object.entries(served)) {
    // The document and page may change with each release; Swagger UI's files only with its version.
    const cacheSeconds = url.startsWith('/docs/swagger-ui') ? 86_400 : 60;
    fastify.get(url, (request, reply) => send(request, reply, content, cacheSeconds));
  }
}
