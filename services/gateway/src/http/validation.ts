import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { compileSchema, invalidInput } from '@app/contracts';

/**
 * Route schemas (the contracts' TypeBox schemas) are compiled once, when the routes are
 * registered, by the same Ajv set-up the services validate RPC commands with; a failure is the
 * API's 400 listing every problem (at most 20), by field (`body`) or parameter (`query`).
 */
export function registerSchemaValidation(fastify: FastifyInstance): void {
  fastify.setValidatorCompiler(({ schema, httpPart }) => {
    const validate = compileSchema(schema as TSchema);
    const root = httpPart === 'body' ? 'body' : 'query';
    return (data: unknown) =>
      validate(data) ? { value: data } : { error: invalidInput(validate.errors ?? [], root) };
  });
}
