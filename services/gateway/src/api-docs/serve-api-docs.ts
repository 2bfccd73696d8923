import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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

/** A response body prepared once, gzipped too for clients that accept it. */
interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
}

const gzipped = promisify(gzip);
const asset = async (type: string, body: string | Buffer): Promise<Asset> => {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  return { type, body: bytes, gzipped: await gzipped(bytes, { level: 9 }) };
};

/** `make` run on the first call only (a failure is not kept: the next call tries again). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () =>
    (made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    }));
}

function send(request: FastifyRequest, reply: FastifyReply, served: Asset, cacheSeconds: number) {
  const gzip = /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
  return reply
    .header('content-type', served.type)
    .header('cache-control', `public, max-age=${cacheSeconds}`)
    .header('vary', 'Accept-Encoding')
    .header('content-encoding', gzip ? 'gzip' : 'identity')
    .send(gzip ? served.gzipped : served.body);
}

/**
 * The document as YAML, rendered on a worker thread: js-yaml takes a second of CPU on a loaded
 * machine, which on the event loop would delay every request (and trip load shedding).
 */
function renderYaml(json: string): Promise<string> {
  const render = `const { parentPort, workerData } = require('node:worker_threads');
    const { dump } = require(workerData.jsYaml);
    parentPort.postMessage(dump(JSON.parse(workerData.json), { noRefs: true, lineWidth: -1 }));`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(render, {
      eval: true,
      workerData: { json, jsYaml: require.resolve('js-yaml') },
    });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const swaggerUiFile = (name: string) => readFile(path.join(SWAGGER_UI, name));

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

/**
 * Swagger UI on the document; "Try it out" sends requests to this gateway (the document's server
 * variable set to the page's origin) with the key from "Authorize".
 */
const DOCS_INIT = `fetch('/openapi.json')
  .then((response) => response.json())
  .then((spec) => {
    spec.servers[0].variables.gateway.default = window.location.origin;
    window.ui = SwaggerUIBundle({
      spec,
      dom_id: '#api',
      deepLinking: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      persistAuthorization: true,
      displayOperationId: true,
    });
  });`;

/**
 * The OpenAPI document at /openapi.json and /openapi.yaml (UTF-8, declared), and Swagger UI at
 * /docs from swagger-ui-dist's own files, gzipped (about 0.5 MB instead of 2.6 MB). Not under /v1:
 * neither authenticated nor rate limited. The document is built at start-up (its JSON is small
 * work); its YAML and every gzipped body are made on their first request, off the event loop, and
 * kept: at start-up they were about half a second of CPU the gateway does not need to answer the API.
 */
export function serveApiDocs(fastify: FastifyInstance): void {
  const json = JSON.stringify(openApiDocument(API_ENDPOINTS));
  const served: Record<string, () => Promise<Asset>> = {
    '/openapi.json': once(() => asset('application/json; charset=utf-8', json)),
    '/openapi.yaml': once(async () => asset('application/yaml; charset=utf-8', await renderYaml(json))),
    '/docs': once(() => asset('text/html; charset=utf-8', DOCS_PAGE)),
    '/docs/init.js': once(() => asset('text/javascript; charset=utf-8', DOCS_INIT)),
    '/docs/swagger-ui.css': once(async () =>
      asset('text/css; charset=utf-8', await swaggerUiFile('swagger-ui.css')),
    ),
    '/docs/swagger-ui-bundle.js': once(async () =>
      asset('text/javascript; charset=utf-8', await swaggerUiFile('swagger-ui-bundle.js')),
    ),
  };
  for (const [url, content] of Object.entries(served)) {
    // The document and page may change with each release; Swagger UI's files only with its version.
    const cacheSeconds = url.startsWith('/docs/swagger-ui') ? 86_400 : 60;
    fastify.get(url, async (request, reply) => send(request, reply, await content(), cacheSeconds));
  }
}
