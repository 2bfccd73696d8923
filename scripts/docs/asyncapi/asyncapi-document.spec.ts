import { readFileSync } from 'node:fs';
import { schemas as asyncApiSchemas } from '@asyncapi/specs';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { load } from 'js-yaml';
import { DOMAIN_EVENT_TYPES } from '@app/contracts';
import { ASYNCAPI_FILE, asyncApiDocument } from './asyncapi-document';

/**
 * docs/asyncapi.yaml is what `npm run docs:asyncapi` writes from libs/contracts (a schema changed
 * without regenerating fails here, so CI catches the drift), it is a valid AsyncAPI 2.6 document,
 * and every example it shows is a message its own schemas accept.
 */

interface Message {
  name: string;
  payload: unknown;
  examples: Array<{ name: string; payload: Record<string, unknown> }>;
}
type Document = { components: { messages: Record<string, Message> } };

const DOCUMENT_ID = 'asyncapi.yaml';

describe('docs/asyncapi.yaml', () => {
  const document = load(readFileSync(ASYNCAPI_FILE, 'utf8')) as Document;

  // Its formatting is Prettier's, checked by `npm run check`.
  it('is what `npm run docs:asyncapi` generates from libs/contracts (run it after changing a schema)', () => {
    expect(document).toEqual(JSON.parse(JSON.stringify(asyncApiDocument())));
  });

  it('is a valid AsyncAPI 2.6.0 document', () => {
    // meta: false, since the AsyncAPI schema brings its own copy of JSON Schema draft-07.
    const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, meta: false });
    addFormats(ajv);
    const validate = ajv.compile(asyncApiSchemas['2.6.0'] as object);
    expect({ valid: validate(asyncApiDocument()), errors: validate.errors }).toEqual({
      valid: true,
      errors: null,
    });
  });

  describe('its examples', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: DOCUMENT_ID, components: document.components });
    const messages = Object.entries(document.components.messages).filter(
      ([, message]) => message.examples !== undefined,
    );

    it('cover every event type', () => {
      expect(messages.map(([, message]) => message.name).sort()).toEqual([...DOMAIN_EVENT_TYPES].sort());
    });

    it.each(messages)('%s: every example is valid against the payload schema', (name, message) => {
      const validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/components/messages/${name}/payload` });
      for (const example of message.examples) {
        expect({ example: example.name, valid: validate(example.payload), errors: validate.errors }).toEqual({
          example: example.name,
          valid: true,
          errors: null,
        });
      }
    });

    it('would catch an undocumented attribute: the payloads are closed', () => {
      const [name, message] = messages[0];
      const validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/components/messages/${name}/payload` });
      expect(validate({ ...message.examples[0].payload, undocumented: 1 })).toBe(false);
      const { sequence: _omitted, ...withoutSequence } = message.examples[0].payload;
      expect(validate(withoutSequence)).toBe(false);
    });
  });
});
