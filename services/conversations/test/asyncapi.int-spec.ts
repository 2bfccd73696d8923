import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { load } from 'js-yaml';
import { DOMAIN_EVENT_TYPES } from '@app/contracts';
import { EventTap, TestStack } from '@app/testing';

/**
 * What the conversations service really publishes is what docs/asyncapi.yaml (generated from
 * libs/contracts: scripts/docs/asyncapi) says: every event type's payload, closed, so an attribute
 * or field the document does not name fails, and the AMQP properties of its message trait.
 */

interface Channel {
  bindings?: { $ref?: string };
  subscribe?: { message: { $ref: string } };
}
interface AsyncApi {
  channels: Record<string, Channel>;
  components: {
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

/** Ajv over the whole document, so payloads' `$ref`s resolve inside it. */
function payloadValidator() {
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components: document.components });
  return (type: string) =>
    ajv.compile({
      $ref: `${DOCUMENT_ID}#${document.channels[type].subscribe!.message.$ref.slice(1)}/payload`,
    });
}

describe('AsyncAPI document', () => {
  const validatorFor = payloadValidator();

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

    it('every event type, as published, matches its closed payload schema (no attribute or field undocumented)', async () => {
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
      // A deletion erases the conversation's events the relay has not published yet: wait for them first.
      await tap.waitForAccount(account.accountId, 8);
      expect((await api.request('DELETE', `/v1/conversations/${id}`)).status).toBe(204);

      const events = await tap.waitForAccount(account.accountId, 9);
      expect(new Set(events.map(({ event }) => event.type))).toEqual(new Set(DOMAIN_EVENT_TYPES));
      for (const { event } of events) {
        const validate = validatorFor(event.type);
        expect({ type: event.type, valid: validate(event), errors: validate.errors }).toEqual({
          type: event.type,
          valid: true,
          errors: null,
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
