import { API_ENDPOINTS } from '../api-docs/serve-api-docs';
import { OPERATION_SCOPES, parseScopes, SCOPES } from './scopes';

/** POSTs that change nothing of the account's data: a stream token only lets a browser read events. */
const READS_BY_POST = new Set(['createStreamToken']);

describe('OPERATION_SCOPES', () => {
  it('gives every operation of the API a scope, and names no operation the API lacks', () => {
    const operations = API_ENDPOINTS.map((endpoint) => endpoint.operationId).sort();
    expect(Object.keys(OPERATION_SCOPES).sort()).toEqual(operations);
  });

  it('reads (GET, and a stream token) need a read scope and writes a write scope of their own area', () => {
    for (const endpoint of API_ENDPOINTS) {
      const [area, access] = OPERATION_SCOPES[endpoint.operationId].split(':');
      expect({ operation: endpoint.operationId, area, access }).toEqual({
        operation: endpoint.operationId,
        area: endpoint.tag,
        access: endpoint.method === 'GET' || READS_BY_POST.has(endpoint.operationId) ? 'read' : 'write',
      });
    }
  });

  it('uses every scope', () => {
    expect(new Set(Object.values(OPERATION_SCOPES))).toEqual(new Set(SCOPES));
  });
});

describe('parseScopes', () => {
  it('takes a comma-separated list in any order, spaces and repeats allowed, in the canonical order', () => {
    expect(parseScopes(' events:read,conversations:read ,events:read')).toEqual({
      scopes: ['conversations:read', 'events:read'],
    });
  });

  it.each([
    ['', 'give at least one scope of conversations:read'],
    [',', 'give at least one scope of conversations:read'],
    ['conversations:delete', 'unknown scope "conversations:delete"; the scopes are conversations:read'],
    ['Events:Read', 'unknown scope "Events:Read"'],
  ])('refuses %j', (text, problem) => {
    const parsed = parseScopes(text);
    expect('problem' in parsed && parsed.problem.startsWith(problem)).toBe(true);
  });
});
