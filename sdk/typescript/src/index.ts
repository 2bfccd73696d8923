export * from './client';
export { ApiError, type Problem } from './errors';
export { EventStream, type StreamOptions } from './event-stream';
export {
  verifyWebhook,
  WebhookVerificationError,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookEvent,
  type WebhookHeaders,
} from './webhooks';
export type { components, operations, paths } from './generated/openapi';
