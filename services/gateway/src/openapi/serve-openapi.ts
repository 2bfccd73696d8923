import type { INestApplication } from '@nestjs/common';
import { type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AnalyticsEndpoints } from '../analytics/analytics.endpoints';
import { ConversationEndpoints } from '../conversations/conversations.endpoints';
import { WebhookEndpoints } from '../webhooks/webhooks.endpoints';
import { openApiDocument } from './openapi-document';

/** Every operation of the public API, in the order the document lists them. */
export const API_ENDPOINTS = [
  ...Object.values(ConversationEndpoints),
  ...Object.values(AnalyticsEndpoints),
  ...Object.values(WebhookEndpoints),
];

/** Serves the OpenAPI document at /openapi.json and /openapi.yaml, rendered at /docs. */
export function serveOpenApi(app: INestApplication): void {
  const document = openApiDocument(API_ENDPOINTS) as unknown as OpenAPIObject;
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
  });
}
