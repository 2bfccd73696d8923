/**
 * What a key may do (docs/api-conventions.md, "Keys and scopes"): each API operation needs one
 * scope, and a key holds a set of them (every scope unless it was created restricted).
 */
export const SCOPES = [
  'conversations:read',
  'conversations:write',
  'analytics:read',
  'events:read',
  'webhooks:read',
  'webhooks:write',
] as const;

export type Scope = (typeof SCOPES)[number];

const isScope = (text: string): text is Scope => (SCOPES as readonly string[]).includes(text);

/**
 * The one table of which scope each operation needs, by operationId. Every route under /v1 that
 * serves an operation is checked against it right after authentication; an operation missing
 * here cannot be called (api-admission.ts), and a test fails for it.
 */
export const OPERATION_SCOPES: Readonly<Record<string, Scope>> = {
  listConversations: 'conversations:read',
  getConversation: 'conversations:read',
  listMessages: 'conversations:read',
  getLead: 'conversations:read',
  createConversation: 'conversations:write',
  sendMessage: 'conversations:write',
  updateConversation: 'conversations:write',
  captureLead: 'conversations:write',
  deleteConversation: 'conversations:write',
  getAnalyticsSummary: 'analytics:read',
  getAnalyticsTimeseries: 'analytics:read',
  listEvents: 'events:read',
  streamEvents: 'events:read',
  getEvent: 'events:read',
  createStreamToken: 'events:read',
  listWebhooks: 'webhooks:read',
  getWebhook: 'webhooks:read',
  listWebhookDeliveries: 'webhooks:read',
  getWebhookDelivery: 'webhooks:read',
  createWebhook: 'webhooks:write',
  updateWebhook: 'webhooks:write',
  deleteWebhook: 'webhooks:write',
  rotateWebhookSecret: 'webhooks:write',
  testWebhook: 'webhooks:write',
  retryWebhookDelivery: 'webhooks:write',
  replayWebhook: 'webhooks:write',
};

/**
 * A comma-separated list of scopes (`cms keys:create --scopes`): each known, at least one,
 * returned in the order of SCOPES without repeats; otherwise the message of what is wrong.
 */
export function parseScopes(text: string): { scopes: Scope[] } | { problem: string } {
  const given = text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  const unknown = given.filter((item) => !isScope(item));
  if (unknown.length > 0)
    return { problem: `unknown scope "${unknown[0]}"; the scopes are ${SCOPES.join(', ')}` };
  if (given.length === 0) return { problem: `give at least one scope of ${SCOPES.join(', ')}` };
  return { scopes: SCOPES.filter((scope) => given.includes(scope)) };
}
