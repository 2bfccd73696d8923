import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { load } from 'js-yaml';
import {
  AnalyticsRpc,
  ConversationRpc,
  DOMAIN_EVENT_TYPES,
  EventRpc,
  RpcOperation,
  WebhookRpc,
} from '@app/contracts';
import { EventTap, TestStack } from '@app/testing';

/**
 * docs/asyncapi.yaml (issue 6, API docs) covers every event the outbox emits and every RPC
 * pattern, and what the conversations service really publishes matches its payload schemas.
 */

const patternsOf = (operations: Record<string, RpcOperation>) =>
  Object.values(operations).map((operation) => operation.pattern);

interface Message {
  name: string;
  payload: { allOf: [{ $ref: string }, { properties: { type: { const: string } } }] };
  examples?: Array<{ name: string; payload: Record<string, unknown> }>;
}
interface Channel {
  bindings?: { $ref?: string };
  subscribe?: { message: { $ref: string } };
  publish?: { message: { $ref: string } };
}
interface AsyncApi {
  asyncapi: string;
  channels: Record<string, Channel>;
  components: {
    messages: Record<string, Message>;
    schemas: Record<string, { properties: Record<string, { enum?: string[] }> }>;
    messageTraits: Record<
      string,
      { headers: { properties: Record<string, unknown> }; bindings: { amqp: { contentEncoding?: string } } }
    >;
  };
}

const DOCUMENT_ID = 'asyncapi.yaml';
const document = load(
  readFileSync(path.resolve(__dirname, '../../../docs/asyncapi.yaml'), 'utf8'),
) as AsyncApi;

const messageName = (ref: string) => ref.replace('#/components/messages/', '');
const eventChannels = () =>
  Object.entries(document.channels).filter(
    ([, channel]) => channel.bindings?.$ref === '#/components/channelBindings/EventsExchange',
  );

/** Ajv over the whole document, so payloads' `$ref`s resolve inside it. */
function payloadValidator() {
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components: document.components });
  return (message: string) => ajv.compile({ $ref: `${DOCUMENT_ID}#/components/messages/${message}/payload` });
}

describe('AsyncAPI document', () => {
  const validatorFor = payloadValidator();
  const messageOf = (type: string) => messageName(document.channels[type].subscribe!.message.$ref);

  it('is AsyncAPI 2 with one channel per event type of the contracts, and no other event channel', () => {
    expect(document.asyncapi).toMatch(/^2\./);
    expect(
      eventChannels()
        .map(([name]) => name)
        .sort(),
    ).toEqual([...DOMAIN_EVENT_TYPES].sort());
    expect([...document.components.schemas.CloudEventEnvelope.properties.type.enum!].sort()).toEqual(
      [...DOMAIN_EVENT_TYPES].sort(),
    );
  });

  it.each([...DOMAIN_EVENT_TYPES])(
    '%s: a message named after it, whose payload fixes the type, with a valid example',
    (type) => {
      const message = document.components.messages[messageOf(type)];
      expect(message.name).toBe(type);
      expect(message.payload.allOf[0].$ref).toBe('#/components/schemas/CloudEventEnvelope');
      expect(message.payload.allOf[1].properties.type.const).toBe(type);
      expect(message.examples?.length).toBeGreaterThan(0);
      const validate = validatorFor(messageOf(type));
      for (const example of message.examples!) {
        expect({ example: example.name, valid: validate(example.payload), errors: validate.errors }).toEqual({
          example: example.name,
          valid: true,
          errors: null,
        });
      }
    },
  );

  it('documents exactly the RPC patterns each service answers', () => {
    const patterns = (channel: string) => {
      const message =
        document.components.messages[messageName(document.channels[channel].publish!.message.$ref)];
      return [
        ...(message.payload.allOf[1].properties as unknown as { pattern: { enum: string[] } }).pattern.enum,
      ].sort();
    };
    expect(patterns('conversations.rpc')).toEqual(
      [...patternsOf(ConversationRpc), ...patternsOf(EventRpc), ...patternsOf(AnalyticsRpc)].sort(),
    );
    expect(patterns('webhooks.rpc')).toEqual(patternsOf(WebhookRpc).sort());
  });

  describe('against the events the service publishes', () => {
    let stack: TestStack;
    let tap: EventTap;
    beforeAll(async () => {
      stack = await TestStack.start();
      tap = await EventTap.open();
    });
    afterAll(async () => {
      await tap?.close();
      await stack?.close();
    });

    it('every event type, as published, matches its payload schema and uses only documented envelope attributes', async () => {
      const account = await stack.createAccount();
      const { api } = account;
      const created = await api.post('/v1/conversations', {
        visitor: { name: 'Ada', email: 'ada@example.com' },
        metadata: { page: '/pricing' },
        message: { sender: 'visitor', content: 'Hi' },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const steps = [
        () => api.post(`/v1/conversations/${id}/messages`, { sender: 'agent', content: 'Hello' }),
        () => api.patch(`/v1/conversations/${id}`, { status: 'pending' }),
        () => api.patch(`/v1/conversations/${id}`, { status: 'closed' }),
        () => api.patch(`/v1/conversations/${id}`, { status: 'active' }),
        () => api.post(`/v1/conversations/${id}/lead`, { phone: '+48 22 123 45 67' }),
        () =>
          api.patch(`/v1/conversations/${id}`, { subject: 'Pricing', metadata: { page: null, plan: 'pro' } }),
      ];
      for (const step of steps) expect((await step()).status).toBeLessThan(300);

      const events = await tap.waitForAccount(account.accountId, 8);
      expect(new Set(events.map(({ event }) => event.type))).toEqual(new Set(DOMAIN_EVENT_TYPES));
      const attributes = Object.keys(document.components.schemas.CloudEventEnvelope.properties);
      for (const { event } of events) {
        const validate = validatorFor(messageOf(event.type));
        expect({ type: event.type, valid: validate(event), errors: validate.errors }).toEqual({
          type: event.type,
          valid: true,
          errors: null,
        });
        expect({
          type: event.type,
          undocumented: Object.keys(event).filter((key) => !attributes.includes(key)),
        }).toEqual({
          type: event.type,
          undocumented: [],
        });
      }
    });

    it('every AMQP property the document states is the one the messages carry, and no more', async () => {
      const { accountId, api } = await stack.createAccount();
      expect((await api.post('/v1/conversations', {})).status).toBe(201);
      const [{ properties }] = await tap.waitForAccount(accountId, 1);
      const trait = document.components.messageTraits.CloudEvent;
      const carried = Object.fromEntries(
        Object.entries({
          message_id: properties.messageId,
          type: properties.type,
          content_type: properties.contentType,
          content_encoding: properties.contentEncoding,
          delivery_mode: properties.deliveryMode,
          timestamp: properties.timestamp,
        }).filter(([, value]) => value !== undefined),
      );
      expect(Object.keys(carried).sort()).toEqual(Object.keys(trait.headers.properties).sort());
      const ajv = new Ajv({ strict: false });
      addFormats(ajv); // the trait names formats (uuid, date-time): checked, not ignored with a warning
      const validate = ajv.compile(trait.headers);
      expect({ valid: validate(carried), errors: validate.errors }).toEqual({ valid: true, errors: null });
      // An AMQP binding's contentEncoding is the content_encoding property (none is set).
      expect(trait.bindings.amqp.contentEncoding).toBe(properties.contentEncoding);
    });
  });
});
