import type { FastifyInstance } from 'fastify';
import { ERROR_CATALOGUE, type ErrorCode, PROBLEM_TYPE_BASE, problemType } from '@app/errors';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
/** The catalogue's help is plain text with `code` spans. */
const toHtml = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

const page = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}td,th{padding:.2rem .6rem;text-align:left;vertical-align:top}</style>
</head>
<body>${body}</body>
</html>`;

function codePage(code: ErrorCode): string {
  const { status, title, help } = ERROR_CATALOGUE[code];
  return page(
    `${code}: ${title}`,
    `<h1>${escapeHtml(title)}</h1>
<p>HTTP status <strong>${status}</strong>, problem <code>code</code> <strong><code>${code}</code></strong>.</p>
<p>${toHtml(help)}</p>
<p>Every error is RFC 9457 problem details (<code>application/problem+json</code>) with <code>type</code> (this page), <code>title</code>, <code>status</code>, <code>detail</code>, <code>code</code> and <code>request_id</code>. <a href="${PROBLEM_TYPE_BASE}">All error codes</a>.</p>`,
  );
}

function indexPage(): string {
  const rows = (Object.keys(ERROR_CATALOGUE) as ErrorCode[])
    .map((code) => {
      const { status, title } = ERROR_CATALOGUE[code];
      return `<tr><td>${status}</td><td><a href="${problemType(code)}"><code>${code}</code></a></td><td>${escapeHtml(title)}</td></tr>`;
    })
    .join('\n');
  return page(
    'Error codes',
    `<h1>Error codes</h1>\n<table><tr><th>Status</th><th>Code</th><th>Title</th></tr>\n${rows}</table>`,
  );
}

/**
 * The pages problem `type`s point at (`/problems/validation-failed`): what each code means and
 * what to do, from the error catalogue itself; `/problems/` lists them all. Public, like /docs.
 */
export function serveProblemPages(fastify: FastifyInstance): void {
  const html = 'text/html; charset=utf-8';
  const index = indexPage();
  fastify.get(PROBLEM_TYPE_BASE, (_request, reply) => reply.type(html).send(index));
  for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
    const content = codePage(code);
    fastify.get(problemType(code), (_request, reply) => reply.type(html).send(content));
  }
}
