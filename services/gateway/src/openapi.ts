import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { PROBLEM_SCHEMAS } from './http/api-problems.decorator';
import { applyApiConventions } from './http/openapi-conventions';

/** Builds the OpenAPI document from the controllers and DTOs; serves it and its rendered docs. */
export function setUpOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Conversation Messaging API')
    .setDescription(
      [
        'Conversations, messages, leads and webhooks for live chat and chatbots.',
        'Every path exists in two renderings (`/v1/conversations`, `/v1/rozmowy`); parameter names and status',
        'values are accepted in English, Malay and Polish, and responses follow `Accept-Language` (en, ms, pl),',
        'else the path. Errors are RFC 9457 problem details with `code` and `request_id`.',
      ].join(' '),
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key: `cms_<key id>_<secret>`' })
    .addServer('/')
    .build();
  const document = applyApiConventions(
    SwaggerModule.createDocument(app, config, { extraModels: PROBLEM_SCHEMAS }),
  );
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
  });
}
