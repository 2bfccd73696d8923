import { Param, PipeTransform } from '@nestjs/common';
import type { TString } from '@sinclair/typebox';
import { PAGE_SIZE, parseWith } from '@app/contracts';

/** Checks a path id against its schema (a UUID): anything else names nothing, a 404 like an unknown id. */
class PathIdPipe implements PipeTransform<string, string> {
  constructor(
    private readonly schema: TString,
    private readonly name: string,
  ) {}

  transform(value: string): string {
    return parseWith(this.schema, value, this.name).toLowerCase();
  }
}

/**
 * A path parameter that is an id (`@PathId('id', ConversationId)`), lower-cased; one that is not
 * a UUID is a 404 naming the resource (the schema's `x-not-found`). Parameters are resolved after
 * Fastify validated the body, so a bad body is still a 400 first.
 */
export const PathId = (name: string, schema: TString): ParameterDecorator =>
  Param(name, new PathIdPipe(schema, name));

/** The page a list request asks for, with the defaults of every paged operation. */
export function pageOf(query: { limit?: number; offset?: number }): { limit: number; offset: number } {
  return { limit: pageLimit(query), offset: query.offset ?? 0 };
}

export const pageLimit = (query: { limit?: number }): number => query.limit ?? PAGE_SIZE.default;
