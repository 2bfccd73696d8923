import { isDeepStrictEqual } from 'node:util';
import { type EditedField, METADATA_LIMITS, type UpdateConversationCommand } from '@app/contracts';
import { DomainError } from '@app/errors';
import type { ConversationRow } from './conversation-row';
import { editedTags, type TagEdit } from './tag-edits';

type Details = Pick<
  ConversationRow,
  'subject' | 'visitor_name' | 'visitor_email' | 'visitor_phone' | 'metadata' | 'tags'
>;

/**
 * The subject, visitor, metadata and tags a PATCH leaves (the visitor replaced whole, null clearing
 * it; metadata merged, a key set to null removed; tags replaced or edited, tag-edits.ts) and which
 * of them differ from the stored ones. The merged metadata must keep the metadata limits, and the
 * edited tags theirs, which the request alone cannot show.
 */
export function editedDetails(
  current: ConversationRow,
  command: Pick<
    UpdateConversationCommand,
    'subject' | 'visitor' | 'metadata' | 'tags' | 'add_tags' | 'remove_tags'
  >,
): { details: Details; changed: EditedField[]; tags: Omit<TagEdit, 'tags'> } {
  const { tags, ...tagChanges } = editedTags(current.tags, command);
  const details: Details = {
    subject: command.subject === undefined ? current.subject : command.subject,
    visitor_name: command.visitor === undefined ? current.visitor_name : (command.visitor?.name ?? null),
    visitor_email: command.visitor === undefined ? current.visitor_email : (command.visitor?.email ?? null),
    visitor_phone: command.visitor === undefined ? current.visitor_phone : (command.visitor?.phone ?? null),
    metadata:
      command.metadata === undefined ? current.metadata : mergedMetadata(current.metadata, command.metadata),
    tags,
  };
  const changed: EditedField[] = [];
  if (details.subject !== current.subject) changed.push('subject');
  const visitorFields = ['visitor_name', 'visitor_email', 'visitor_phone'] as const;
  if (visitorFields.some((field) => details[field] !== current[field])) changed.push('visitor');
  if (!isDeepStrictEqual(details.metadata, current.metadata)) changed.push('metadata');
  if (tagChanges.added.length + tagChanges.removed.length > 0) changed.push('tags');
  return { details, changed, tags: tagChanges };
}

function mergedMetadata(
  stored: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  const keys = Object.keys(merged).length;
  if (keys > METADATA_LIMITS.keys) {
    throw DomainError.validation([
      {
        field: 'metadata',
        message: `merged with the stored metadata it would have ${keys} keys; at most ${METADATA_LIMITS.keys}`,
      },
    ]);
  }
  const bytes = Buffer.byteLength(JSON.stringify(merged));
  if (bytes > METADATA_LIMITS.bytes) {
    throw DomainError.validation([
      {
        field: 'metadata',
        message: `merged with the stored metadata it would be ${bytes} bytes; at most ${METADATA_LIMITS.bytes}`,
      },
    ]);
  }
  return merged;
}
