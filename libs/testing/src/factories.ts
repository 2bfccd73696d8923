import type { ConversationView } from '@app/contracts';
import type { ApiClient } from './api-client';

/** Test data made through the public API, as a client makes it (Immich-style small factories). */

/** A conversation created by `api` (201 asserted); `body` overrides the defaults field by field. */
export async function newConversation(
  api: ApiClient,
  body: Record<string, unknown> = {},
): Promise<ConversationView> {
  const created = await api.post('/v1/conversations', { subject: 'Test conversation', ...body });
  expect(created.status).toBe(201);
  return created.body as ConversationView;
}
