import { DomainError } from '@app/errors';
import { UpdateConversationBody as PatchBody } from './conversation-requests';
import { parseWith } from './schema-validation';

const errorsOf = (value: unknown) => {
  try {
    parseWith(PatchBody, value);
  } catch (error) {
    return (error as DomainError).errors;
  }
  return undefined;
};

describe('tags or tag edits: one request does one or the other', () => {
  it.each([[[]], ['str'], [1], [null], [true]])(
    'a body that is not an object (%j) gets only the body error',
    (body) => {
      expect(errorsOf(body)).toEqual([{ field: 'body', message: 'must be a JSON object' }]);
    },
  );

  it.each([{ add_tags: ['a'] }, { remove_tags: ['a'] }, { add_tags: ['a'], remove_tags: ['b'] }])(
    'tags with %j is the tags error',
    (edits) => {
      expect(errorsOf({ tags: ['x'], ...edits })).toEqual([
        { field: 'tags', message: 'cannot be given with add_tags or remove_tags' },
      ]);
    },
  );

  it('tags alone, or edits alone, are accepted', () => {
    expect(errorsOf({ tags: ['x'] })).toBeUndefined();
    expect(errorsOf({ add_tags: ['x'], remove_tags: ['y'] })).toBeUndefined();
  });
});
