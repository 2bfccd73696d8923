import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIV3 } from 'openapi-types';
import { COLLECTION_SEGMENTS, MESSAGES_SEGMENTS } from '@app/dialects';

/** What the contract needs to know about a response. */
export interface ObservedResponse {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

type Schema = Record<string, unknown>;

/**
 * An OpenAPI 3.0 schema as JSON Schema for Ajv: `nullable` becomes "or null", and an object that
 * lists its properties allows no others, so a field the service sends but the document does not
 * name is a mismatch (the document and the service cannot drift apart in either direction).
 */
function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const { nullable, example: _example, ...rest } = schema as Schema;
  const converted: Schema = {};
  for (const [key, value] of Object.entries(rest)) converted[key] = toJsonSchema(value);
  if (converted.properties && converted.additionalProperties === undefined)
    converted.additionalProperties = false;
  return nullable ? { anyOf: [converted, { type: 'null' }] } : converted;
}

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  responses: OpenAPIV3.ResponsesObject;
}

/**
 * Decodes each path segment as the router does (`wiadomo%C5%9Bci` is `wiadomości`); an encoded
 * slash stays inside its segment.
 */
function decodedPath(url: URL): string {
  return url.pathname
    .split('/')
    .map((segment) => {
      try {
        const decoded = decodeURIComponent(segment);
        return decoded.includes('/') ? segment : decoded;
      } catch {
        return segment;
      }
    })
    .join('/');
}

/** The path with every segment in its canonical (English) spelling. */
function canonicalSpelling(path: string): string {
  const canonical = new Map<string, string>(
    [COLLECTION_SEGMENTS, MESSAGES_SEGMENTS].flatMap((names) => names.map((name) => [name, names[0]])),
  );
  return path
    .split('/')
    .map((segment) => canonical.get(segment) ?? segment)
    .join('/');
}

/**
 * The gateway's own OpenAPI document, used to check every response a test receives from the
 * public API (`/v1`): the operation exists, the status is documented for it, and the body has a
 * documented content type and matches its schema.
 */
export class OpenApiContract {
  private static readonly byBaseUrl = new Map<string, Promise<OpenApiContract>>();
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<object, ValidateFunction>();
  private readonly operations: Operation[];

  private constructor(document: OpenAPIV3.Document) {
    addFormats(this.ajv);
    this.operations = Object.entries(document.paths).flatMap(([template, item]) =>
      Object.entries(item ?? {})
        .filter(([method]) => ['get', 'post', 'patch', 'put', 'delete'].includes(method))
        .map(([method, operation]) => ({
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(
            `^${decodeURI(template)
              .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
              .replace(/\{[^}]+\}/g, '[^/]+')}$`,
          ),
          responses: (operation as OpenAPIV3.OperationObject).responses,
        })),
    );
  }

  /** The document served by the gateway at this base URL, fetched and dereferenced once. */
  static for(baseUrl: string): Promise<OpenApiContract> {
    const origin = new URL(baseUrl).origin;
    let contract = this.byBaseUrl.get(origin);
    if (!contract) {
      contract = fetch(`${origin}/openapi.json`)
        .then(async (response) => {
          if (!response.ok) throw new Error(`GET ${origin}/openapi.json answered ${response.status}`);
          return OpenApiContract.fromDocument((await response.json()) as OpenAPIV3.Document);
        })
        .catch((error: Error) => {
          this.byBaseUrl.delete(origin);
          throw error;
        });
      this.byBaseUrl.set(origin, contract);
    }
    return contract;
  }

  static async fromDocument(document: OpenAPIV3.Document): Promise<OpenApiContract> {
    return new OpenApiContract(
      (await SwaggerParser.dereference(structuredClone(document))) as OpenAPIV3.Document,
    );
  }

  /** Whether the contract covers this URL: the public API only (health, metrics and docs are not in it). */
  static covers(url: URL): boolean {
    return url.pathname === '/v1' || url.pathname.startsWith('/v1/');
  }

  /** Every way the response differs from the document (empty when it matches). */
  mismatches(method: string, url: URL, response: ObservedResponse): string[] {
    const path = decodedPath(url);
    const find = (candidate: string) =>
      this.operations.find((op) => op.method === method && op.pattern.test(candidate));
    // Mixed spellings (`/v1/conversations/{id}/wiadomości`) are served but documented canonically.
    const operation = find(path) ?? find(canonicalSpelling(path));
    if (!operation) return [`${method} ${path} is not in the OpenAPI document`];
    const documented = operation.responses[String(response.status)] ?? operation.responses.default;
    if (!documented) {
      return [`${response.status} is not a documented response of ${method} ${operation.template}`];
    }
    const where = `${response.status} of ${method} ${operation.template}`;
    const { content, headers = {} } = documented as OpenAPIV3.ResponseObject;
    const problems = Object.entries(headers)
      .filter(([name, header]) => (header as OpenAPIV3.HeaderObject).required && !response.headers.has(name))
      .map(([name]) => `${where}: header ${name} is missing`);
    if (!content)
      return response.text === '' ? problems : [...problems, `${where} is documented without a body`];
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0].trim();
    const media = content[mediaType];
    if (!media) return [...problems, `${where}: content type ${mediaType || '(none)'} is not documented`];
    if (media.schema) {
      const validate = this.validator(media.schema);
      if (!validate(response.body)) {
        problems.push(
          ...(validate.errors ?? []).map(
            (e) => `${where}: body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`,
          ),
        );
      }
    }
    return [...problems, ...this.undocumentedCode(where, media, response.body)];
  }

  /** A problem's `code` must be one the document gives for that response (one example per code). */
  private undocumentedCode(where: string, media: OpenAPIV3.MediaTypeObject, body: unknown): string[] {
    const code = (body as { code?: unknown } | undefined)?.code;
    if (!media.examples || code === undefined) return [];
    const documented = Object.values(media.examples).map(
      (example) => (example as OpenAPIV3.ExampleObject).value?.code,
    );
    return documented.includes(code)
      ? []
      : [`${where}: code ${JSON.stringify(code)} is not documented (${documented.join(', ')})`];
  }

  private validator(schema: object): ValidateFunction {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as Schema);
      this.validators.set(schema, validate);
    }
    return validate;
  }
}
