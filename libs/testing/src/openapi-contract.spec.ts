import type { OpenAPIV3 } from 'openapi-types';
import { OpenApiContract } from './openapi-contract';

/** The response check the e2e tests rely on: what it lets through and what it catches. */

const problem = { $ref: '#/components/schemas/Problem' };
const document: OpenAPIV3.Document = {
  openapi: '3.0.0',
  info: { title: 'test', version: '1' },
  paths: {
    '/v1/things/{id}/wiadomości': {
      get: {
        responses: {
          '200': {
            description: 'ok',
            headers: { 'X-Request-Id': { required: true, schema: { type: 'string' } } },
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id', 'note'],
                  properties: {
                    id: { type: 'string', format: 'uuid' },
                    note: { type: 'string', nullable: true },
                  },
                },
              },
            },
          },
          '204': { description: 'nothing' },
          '404': {
            description: 'problem',
            content: {
              'application/problem+json': {
                schema: problem,
                examples: { not_found: { value: { code: 'not_found' } } },
              },
            },
          },
        },
      },
    },
  },
  components: {
    schemas: { Problem: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } } },
  },
};

const ID = '0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b';
const url = new URL(`http://127.0.0.1/v1/things/${ID}/wiadomo%C5%9Bci?x=1`);

function response(status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = body === undefined ? '' : JSON.stringify(body);
  return {
    status,
    body,
    text,
    headers: new Headers({ 'x-request-id': 'r1', 'content-type': 'application/json', ...headers }),
  };
}

describe('OpenApiContract', () => {
  let contract: OpenApiContract;
  beforeAll(async () => {
    contract = await OpenApiContract.fromDocument(document);
  });

  it('accepts a documented response (percent-encoded path, nullable field, charset parameter)', () => {
    const ok = response(200, { id: ID, note: null }, { 'content-type': 'application/json; charset=utf-8' });
    expect(contract.mismatches('GET', url, ok)).toEqual([]);
    expect(contract.mismatches('GET', url, response(204, undefined))).toEqual([]);
  });

  it('rejects an undocumented operation or status', () => {
    expect(contract.mismatches('POST', url, response(200, {}))).toEqual([
      expect.stringContaining('not in the OpenAPI document'),
    ]);
    expect(contract.mismatches('GET', new URL('http://127.0.0.1/v1/things'), response(200, {}))).toHaveLength(
      1,
    );
    expect(contract.mismatches('GET', url, response(500, {}))).toEqual([
      expect.stringContaining('500 is not a documented response'),
    ]);
  });

  it('rejects a body that differs from the schema: wrong type, missing or undocumented field', () => {
    expect(contract.mismatches('GET', url, response(200, { id: 'x', note: null }))).toEqual([
      expect.stringContaining('format'),
    ]);
    expect(contract.mismatches('GET', url, response(200, { id: ID }))).toEqual([
      expect.stringContaining("required property 'note'"),
    ]);
    expect(contract.mismatches('GET', url, response(200, { id: ID, note: 'a', extra: 1 }))).toEqual([
      expect.stringContaining('additional properties'),
    ]);
  });

  it('rejects an undocumented content type, a missing required header, a body where none is documented', () => {
    expect(
      contract.mismatches(
        'GET',
        url,
        response(200, { id: ID, note: null }, { 'content-type': 'text/plain' }),
      ),
    ).toHaveLength(1);
    const headerless = response(200, { id: ID, note: null });
    headerless.headers.delete('x-request-id');
    expect(contract.mismatches('GET', url, headerless)).toEqual([
      expect.stringContaining('header X-Request-Id is missing'),
    ]);
    expect(contract.mismatches('GET', url, response(204, { id: ID }))).toEqual([
      expect.stringContaining('without a body'),
    ]);
  });

  it('rejects a problem code the response does not document', () => {
    const type = { 'content-type': 'application/problem+json' };
    expect(contract.mismatches('GET', url, response(404, { code: 'not_found' }, type))).toEqual([]);
    expect(contract.mismatches('GET', url, response(404, { code: 'route_not_found' }, type))).toEqual([
      expect.stringContaining('code "route_not_found" is not documented'),
    ]);
  });

  it('covers the public API only', () => {
    expect(OpenApiContract.covers(url)).toBe(true);
    expect(OpenApiContract.covers(new URL('http://127.0.0.1/health/ready'))).toBe(false);
    expect(OpenApiContract.covers(new URL('http://127.0.0.1/v1'))).toBe(true);
  });
});
