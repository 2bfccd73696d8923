import 'reflect-metadata';
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { plainToInstance, Type as NestedType } from 'class-transformer';
import {
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  MaxLength,
  ValidateNested,
  validateSync,
} from 'class-validator';
import { z as zod3 } from 'zod';
import { z as zod4 } from 'zod/v4';

/**
 * `npm run bench:schemas`: what one validation of a request body costs in each schema library the
 * project could use (BENCHMARKS.md, "Choosing the schema library"). The same two bodies in each: send-message
 * ({content, sender}) and create-conversation (visitor, subject, metadata, status, first message),
 * unknown fields refused. Prints ns per validation of a valid body and of an invalid one.
 */

const SENDERS = ['agent', 'visitor', 'bot', 'system'] as const;

// class-validator + class-transformer, as the gateway's DTOs were before TypeBox.
class MessageDto {
  @IsString() @Length(1, 10_000) content!: string;
  @IsIn(SENDERS) sender!: string;
}
class VisitorDto {
  @IsOptional() @IsString() @MaxLength(200) name?: string | null;
  @IsOptional() @IsString() @MaxLength(320) email?: string | null;
  @IsOptional() @IsString() @MaxLength(50) phone?: string | null;
}
class CreateDto {
  @IsOptional() @IsObject() @ValidateNested() @NestedType(() => VisitorDto) visitor?: VisitorDto | null;
  @IsOptional() @IsString() @MaxLength(500) subject?: string | null;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsString() @MaxLength(50) status?: string;
  @IsOptional() @IsObject() @ValidateNested() @NestedType(() => MessageDto) message?: MessageDto;
}
const classValidator = (dto: new () => object) => (body: unknown) =>
  validateSync(plainToInstance<object, object>(dto, body as object), {
    whitelist: true,
    forbidNonWhitelisted: true,
  }).length === 0;

// TypeBox: JSON Schema, compiled by Ajv (as Fastify does) or by TypeBox's own compiler.
const text = (max: number) => Type.Union([Type.String({ maxLength: max }), Type.Null()]);
const message = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: 10_000 }),
    sender: Type.Union(SENDERS.map((s) => Type.Literal(s))),
  },
  { additionalProperties: false },
);
const create = Type.Object(
  {
    visitor: Type.Optional(
      Type.Union([
        Type.Object(
          { name: Type.Optional(text(200)), email: Type.Optional(text(320)), phone: Type.Optional(text(50)) },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
    ),
    subject: Type.Optional(text(500)),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 50 })),
    status: Type.Optional(Type.String({ maxLength: 50 })),
    message: Type.Optional(message),
  },
  { additionalProperties: false },
);
const ajv = addFormats(new Ajv({ allErrors: true }));

// zod 3 (the services' validation before TypeBox) and zod 4.
/** The same schemas in either major version (their API is the same for these calls). */
function zodSchemas(z: typeof zod4) {
  const zText = (max: number) => z.string().max(max).nullable().optional();
  const zMessage = z.object({ content: z.string().min(1).max(10_000), sender: z.enum(SENDERS) }).strict();
  return {
    message: zMessage,
    create: z
      .object({
        visitor: z
          .object({ name: zText(200), email: zText(320), phone: zText(50) })
          .strict()
          .nullable()
          .optional(),
        subject: zText(500),
        metadata: z.record(z.string(), z.unknown()).optional(),
        status: z.string().max(50).optional(),
        message: zMessage.optional(),
      })
      .strict(),
  };
}
const z3 = zodSchemas(zod3 as unknown as typeof zod4);
const z4 = zodSchemas(zod4);

const bodies = {
  message: {
    valid: { content: 'Hello! How can I help you today?', sender: 'agent' },
    invalid: { content: '', sender: 'x', extra: 1 },
  },
  create: {
    valid: {
      visitor: { name: 'Ada Lovelace', email: 'ada@example.com', phone: null },
      subject: 'Question about my order',
      metadata: { order_id: 'A-1001', channel: 'web' },
      status: 'active',
      message: { content: 'Hi, where is my parcel?', sender: 'visitor' },
    },
    invalid: { visitor: { name: 1 }, subject: 'x'.repeat(600), message: { content: '' }, extra: true },
  },
};

type Validate = (body: unknown) => boolean;
const libraries: Record<string, Record<'message' | 'create', Validate>> = {
  'class-validator': { message: classValidator(MessageDto), create: classValidator(CreateDto) },
  'zod 3': { message: (b) => z3.message.safeParse(b).success, create: (b) => z3.create.safeParse(b).success },
  'zod 4': { message: (b) => z4.message.safeParse(b).success, create: (b) => z4.create.safeParse(b).success },
  'TypeBox + Ajv': { message: ajv.compile(message), create: ajv.compile(create) },
  'TypeBox compiler': {
    message: (b) => TypeCompiler.Compile(message).Check(b),
    create: (b) => TypeCompiler.Compile(create).Check(b),
  },
};
// The TypeBox compiler's check is compiled once like the others, not per call.
const compiledMessage = TypeCompiler.Compile(message);
const compiledCreate = TypeCompiler.Compile(create);
libraries['TypeBox compiler'] = {
  message: (b) => compiledMessage.Check(b),
  create: (b) => compiledCreate.Check(b),
};

function nsPerCall(validate: Validate, body: unknown, expected: boolean): number {
  if (validate(body) !== expected) throw new Error('validator disagrees with the expected verdict');
  const iterations = 20_000;
  for (let i = 0; i < iterations; i++) validate(body); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) validate(body);
  return Number(process.hrtime.bigint() - start) / iterations;
}

console.log(
  'library            | message valid | message invalid | create valid | create invalid (ns per validation)',
);
for (const [name, validators] of Object.entries(libraries)) {
  const cells = (['message', 'create'] as const).flatMap((kind) => [
    nsPerCall(validators[kind], bodies[kind].valid, true),
    nsPerCall(validators[kind], bodies[kind].invalid, false),
  ]);
  console.log(`${name.padEnd(18)} | ${cells.map((ns) => String(Math.round(ns)).padStart(13)).join(' | ')}`);
}
