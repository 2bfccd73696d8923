import { normalizeTags, TAG_LIMITS, type UpdateConversationCommand } from '@app/contracts';
import { DomainError } from '@app/errors';

/** What an update does to a conversation's tags: the set it leaves, and what it added and removed. */
export interface TagEdit {
  tags: string[];
  added: string[];
  removed: string[];
}

/**
 * The tags an update leaves, from the stored ones (read under the conversation's lock, so edits of
 * concurrent updates apply one after the other and none is lost): `tags` replaces the set (the same
 * set in another order changes nothing); `add_tags` and `remove_tags` edit it, new tags going last.
 */
export function editedTags(
  current: readonly string[],
  command: Pick<UpdateConversationCommand, 'tags' | 'add_tags' | 'remove_tags'>,
): TagEdit {
  const next = command.tags !== undefined ? replaced(current, command.tags) : edited(current, command);
  return {
    tags: next,
    added: next.filter((tag) => !current.includes(tag)),
    removed: current.filter((tag) => !next.includes(tag)),
  };
}

function replaced(current: readonly string[], given: readonly string[]): string[] {
  const next = normalizeTags(given);
  const same = next.length === current.length && next.every((tag) => current.includes(tag));
  return same ? [...current] : next;
}

/** A request that adds and removes the same tag says nothing clear: a 400 before anything is read. */
export function checkTagEdits(command: Pick<UpdateConversationCommand, 'add_tags' | 'remove_tags'>): void {
  const remove = new Set(normalizeTags(command.remove_tags ?? []));
  const both = normalizeTags(command.add_tags ?? []).filter((tag) => remove.has(tag));
  if (both.length > 0) {
    throw DomainError.validation([
      { field: 'remove_tags', message: `names tags add_tags adds too: ${both.join(', ')}` },
    ]);
  }
}

function edited(
  current: readonly string[],
  command: Pick<UpdateConversationCommand, 'add_tags' | 'remove_tags'>,
): string[] {
  const add = normalizeTags(command.add_tags ?? []);
  const remove = new Set(normalizeTags(command.remove_tags ?? []));
  const next = [...current.filter((tag) => !remove.has(tag)), ...add.filter((tag) => !current.includes(tag))];
  if (next.length > TAG_LIMITS.perConversation) {
    throw DomainError.validation([
      {
        field: 'add_tags',
        message: `the conversation would have ${next.length} tags; at most ${TAG_LIMITS.perConversation}`,
      },
    ]);
  }
  return next;
}
