import { compareSnapshots, type ContractSnapshot, type Schema } from './schema-compat';

const conversation = (properties: Record<string, Schema>, required = Object.keys(properties)) => ({
  type: 'object',
  additionalProperties: false,
  properties,
  required,
});
const STATUS = { type: 'string', enum: ['active', 'pending', 'closed'] };
const ID = { type: 'string', format: 'uuid' };
const SUBJECT = { anyOf: [{ type: 'string', maxLength: 500 }, { type: 'null' }] };

/** A release with one HTTP operation, one RPC operation and one event, all built from `parts`. */
function release(
  parts: { command?: Schema; reply?: Schema; body?: Schema; data?: Schema } = {},
): ContractSnapshot {
  const command = parts.command ?? conversation({ conversationId: ID, status: STATUS });
  const reply = parts.reply ?? conversation({ id: ID, status: STATUS, subject: SUBJECT });
  const body = parts.body ?? conversation({ status: STATUS, subject: SUBJECT }, []);
  return {
    http: {
      openapi: '3.1.0',
      paths: {
        '/v1/rozmowy/{id}': {
          patch: {
            parameters: [{ $ref: '#/components/parameters/Id' }],
            requestBody: { required: true, content: { 'application/json': { schema: body } } },
            responses: {
              '200': {
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Conversation' } } },
              },
            },
          },
        },
      },
      components: {
        parameters: { Id: { in: 'path', name: 'id', required: true, schema: ID } },
        schemas: { Conversation: reply },
      },
    },
    rpc: { 'conversations.update': { command, reply } },
    events: { 'conversation.updated': { data: parts.data ?? conversation({ conversation: reply }) } },
  };
}

const problems = (before: ContractSnapshot, after: ContractSnapshot) =>
  compareSnapshots(before, after).map(({ where, problem }) => `${where}: ${problem}`);

describe('compareSnapshots: what a release may change without breaking the one before it', () => {
  it('passes the same schemas, and an added optional field in every message', () => {
    expect(problems(release(), release())).toEqual([]);
    const withTags = conversation({ id: ID, status: STATUS, subject: SUBJECT, tags: { type: 'array' } }, [
      'id',
      'status',
      'subject',
    ]);
    const added = release({
      reply: withTags,
      command: conversation({ conversationId: ID, status: STATUS, tags: { type: 'array' } }, [
        'conversationId',
        'status',
      ]),
      body: conversation({ status: STATUS, subject: SUBJECT, tags: { type: 'array' } }, []),
      data: conversation({ conversation: withTags }),
    });
    expect(problems(release(), added)).toEqual([]);
  });

  it('passes a new enum value, and a request field made optional or nullable', () => {
    const wider = { type: 'string', enum: ['active', 'pending', 'closed', 'snoozed'] };
    expect(
      problems(
        release(),
        release({
          command: conversation({ conversationId: ID, status: { anyOf: [wider, { type: 'null' }] } }, [
            'conversationId',
          ]),
          reply: conversation({ id: ID, status: wider, subject: SUBJECT }),
        }),
      ),
    ).toEqual([]);
  });

  it('fails on a removed field, wherever a reader of the old release finds it', () => {
    const reply = conversation({ id: ID, status: STATUS });
    expect(problems(release(), release({ reply, data: conversation({ conversation: reply }) }))).toEqual([
      'PATCH /v1/rozmowy/{id} response 200 .subject: field removed',
      'rpc conversations.update reply .subject: field removed',
      'event conversation.updated data .conversation .subject: field removed',
    ]);
  });

  it('fails on a narrowed enum, in a request and in a response', () => {
    const narrowed = { type: 'string', enum: ['active', 'closed'] };
    expect(
      problems(
        release(),
        release({
          command: conversation({ conversationId: ID, status: narrowed }),
          body: conversation({ status: narrowed, subject: SUBJECT }, []),
        }),
      ),
    ).toEqual([
      'PATCH /v1/rozmowy/{id} request body .status: enum narrowed: "pending" removed',
      'rpc conversations.update command .status: enum narrowed: "pending" removed',
    ]);
  });

  it('fails on a new required request field, in a body, a command and a parameter', () => {
    const after = release({
      command: conversation({ conversationId: ID, status: STATUS, reason: { type: 'string' } }),
      body: conversation({ status: STATUS, subject: SUBJECT, reason: { type: 'string' } }, ['reason']),
    });
    (after.http as any).paths['/v1/rozmowy/{id}'].patch.parameters.push({
      in: 'header',
      name: 'x-reason',
      required: true,
      schema: { type: 'string' },
    });
    expect(problems(release(), after)).toEqual([
      'PATCH /v1/rozmowy/{id} header parameter x-reason: new required request field',
      'PATCH /v1/rozmowy/{id} request body .reason: new required request field',
      'rpc conversations.update command .reason: new required request field',
    ]);
  });

  it('fails on a narrowed type: null no longer accepted, a shorter limit, a number where text was', () => {
    const after = release({
      body: conversation({ status: STATUS, subject: { type: 'string', maxLength: 100 } }, []),
      reply: conversation({ id: ID, status: STATUS, subject: { type: 'integer' } }),
    });
    const widened = (where: string) =>
      `${where} .subject: type widened: may now be integer, which readers of the old schema do not expect`;
    expect(problems(release(), after)).toEqual([
      'PATCH /v1/rozmowy/{id} request body .subject: narrowed: maxLength 500 -> 100',
      'PATCH /v1/rozmowy/{id} request body .subject: type narrowed: null no longer accepted',
      'PATCH /v1/rozmowy/{id} response 200 .subject: type narrowed: string no longer accepted',
      'PATCH /v1/rozmowy/{id} response 200 .subject: type narrowed: null no longer accepted',
      widened('PATCH /v1/rozmowy/{id} response 200'),
      'rpc conversations.update reply .subject: type narrowed: string no longer accepted',
      'rpc conversations.update reply .subject: type narrowed: null no longer accepted',
      widened('rpc conversations.update reply'),
      'event conversation.updated data .conversation .subject: type narrowed: string no longer accepted',
      'event conversation.updated data .conversation .subject: type narrowed: null no longer accepted',
      widened('event conversation.updated data .conversation'),
    ]);
  });

  it('fails on a response field that may now be absent or null, which old readers do not expect', () => {
    const reply = conversation({ id: ID, status: { anyOf: [STATUS, { type: 'null' }] }, subject: SUBJECT }, [
      'status',
      'subject',
    ]);
    expect(problems(release(), release({ reply })).filter((line) => line.startsWith('rpc'))).toEqual([
      'rpc conversations.update reply .id: field no longer always present',
      'rpc conversations.update reply .status: type widened: may now be null, which readers of the old schema do not expect',
    ]);
  });

  it('fails on a removed operation, event type or path, and finds paths however they are encoded', () => {
    const after = release();
    after.rpc = {};
    after.events = {};
    const paths = (after.http as any).paths;
    paths['/v1/rozmowy/{id}/wiadomości'] = { get: { responses: {} } };
    const before = release();
    (before.http as any).paths['/v1/rozmowy/{id}/wiadomo%C5%9Bci'] = { get: { responses: {} } };
    delete paths['/v1/rozmowy/{id}'];
    expect(problems(before, after)).toEqual([
      'PATCH /v1/rozmowy/{id}: operation removed',
      'rpc conversations.update: operation removed',
      'event conversation.updated: event type removed',
    ]);
  });

  it('passes one response object split into branches by a discriminator when they take every old value together', () => {
    const event = (status: Schema) => conversation({ id: ID, status });
    const oneOf = (statuses: string[]) => ({
      oneOf: statuses.map((status) => event({ type: 'string', const: status })),
      discriminator: { propertyName: 'status' },
    });
    expect(problems(release({ reply: event(STATUS) }), release({ reply: oneOf(STATUS.enum) }))).toEqual([]);
    expect(
      problems(release({ reply: event(STATUS) }), release({ reply: oneOf(['active', 'pending']) })),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/response 200 .status: enum narrowed: .*"closed" removed/),
      ]),
    );
  });
});
