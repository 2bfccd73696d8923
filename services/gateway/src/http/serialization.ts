import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { compileSerializer } from '@app/contracts';

/** Response bodies are serialized from the contracts' schemas, compiled once per route. */
export function registerResponseSerialization(fastify: FastifyInstance): void {
  fastify.setSerializerCompiler(({ schema }) => compileSerializer<TSchema>(schema as TSchema));
}
