import type { IncomingMessage } from 'node:http';

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^#]*)/i;

/**
 * RFC 9112, 3.2.2: a server must accept a request target in absolute form
 * (`GET http://host/v1/conversations`), as proxies send it. It is routed on its path and query,
 * exactly like the origin form `GET /v1/conversations`, so every hook, route and log sees one
 * spelling of the URL.
 */
export function originForm(request: IncomingMessage): string {
  const target = request.url ?? '/';
  if (target.startsWith('/')) return target;
  const match = ABSOLUTE_FORM.exec(target);
  if (!match) return target;
  return match[1].startsWith('/') ? match[1] : `/${match[1]}`;
}
