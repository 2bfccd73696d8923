import { DomainError } from '@app/errors';
import { checkTagEdits, editedTags } from './tag-edits';

const refusal = (edit: () => unknown): DomainError => {
  try {
    edit();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('the edit was not refused');
};

describe('editedTags', () => {
  it('replaces the set with `tags`, normalised and without duplicates; the same set in another order changes nothing', () => {
    expect(editedTags(['vip'], { tags: [' Billing ', 'BILLING', 'Café'] })).toEqual({
      tags: ['billing', 'café'],
      added: ['billing', 'café'],
      removed: ['vip'],
    });
    expect(editedTags(['a', 'b'], { tags: ['B', 'a'] })).toEqual({
      tags: ['a', 'b'],
      added: [],
      removed: [],
    });
    expect(editedTags(['a'], { tags: [] })).toEqual({ tags: [], added: [], removed: ['a'] });
  });

  it('adds new tags last and removes named ones; tags already there or absent change nothing', () => {
    expect(
      editedTags(['vip', 'sales'], { add_tags: ['refund', 'VIP'], remove_tags: ['sales', 'absent'] }),
    ).toEqual({
      tags: ['vip', 'refund'],
      added: ['refund'],
      removed: ['sales'],
    });
    expect(editedTags(['vip'], {})).toEqual({ tags: ['vip'], added: [], removed: [] });
  });

  it('refuses an edit that would leave more than 20 tags, naming add_tags', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => `t${i}`);
    expect(editedTags(twenty.slice(0, 19), { add_tags: ['t19'] }).tags).toHaveLength(20);
    const refused = refusal(() => editedTags(twenty, { add_tags: ['t20'] }));
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused.errors).toEqual([
      { field: 'add_tags', message: 'the conversation would have 21 tags; at most 20' },
    ]);
    // Removing in the same edit makes room.
    expect(editedTags(twenty, { add_tags: ['t20'], remove_tags: ['t0'] }).tags).toHaveLength(20);
  });
});

describe('checkTagEdits', () => {
  it('refuses a tag both added and removed (once normalised)', () => {
    expect(refusal(() => checkTagEdits({ add_tags: ['Vip'], remove_tags: ['vip '] })).errors).toEqual([
      { field: 'remove_tags', message: 'names tags add_tags adds too: vip' },
    ]);
    expect(() => checkTagEdits({ add_tags: ['vip'], remove_tags: ['sales'] })).not.toThrow();
  });
});
