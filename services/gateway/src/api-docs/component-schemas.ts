import type { TSchema } from '@sinclair/typebox';
import {
  AnalyticsSummaryResponse,
  AnalyticsTimeseriesView,
  CaptureLeadBody,
  UpdateConversationBody,
  ConversationListResponse,
  MessagePageResponse,
  ConversationResponse,
  ConversationWithMessagesResponse,
  CreateConversationBody,
  CreateWebhookBody,
  DeliveryAttemptView,
  DeliveryListResponse,
  DeliveryResponse,
  DeliveryWithAttemptsResponse,
  LeadView,
  MessageInput,
  MessageView,
  UpdateWebhookBody,
  VisitorInput,
  VisitorView,
  WebhookListResponse,
  WebhookResponse,
  WebhookWithSecretResponse,
} from '@app/contracts';
import { ProblemDetailsSchema } from '@app/errors';

/**
 * The contract schemas the document names (`#/components/schemas/Conversation`), so a generated
 * client gets one named type per shape instead of a copy inside every operation.
 */
export const COMPONENT_SCHEMAS: Record<string, TSchema> = {
  Conversation: ConversationResponse,
  ConversationWithMessages: ConversationWithMessagesResponse,
  ConversationList: ConversationListResponse,
  MessagePage: MessagePageResponse,
  Message: MessageView,
  Lead: LeadView,
  Visitor: VisitorView,
  CreateConversation: CreateConversationBody,
  NewVisitor: VisitorInput,
  SendMessage: MessageInput,
  UpdateConversation: UpdateConversationBody,
  CaptureLead: CaptureLeadBody,
  AnalyticsSummary: AnalyticsSummaryResponse,
  AnalyticsTimeseries: AnalyticsTimeseriesView,
  Webhook: WebhookResponse,
  WebhookWithSecret: WebhookWithSecretResponse,
  WebhookList: WebhookListResponse,
  CreateWebhook: CreateWebhookBody,
  UpdateWebhook: UpdateWebhookBody,
  Delivery: DeliveryResponse,
  DeliveryWithAttempts: DeliveryWithAttemptsResponse,
  DeliveryList: DeliveryListResponse,
  DeliveryAttempt: DeliveryAttemptView,
  Problem: ProblemDetailsSchema,
};

type Json = Record<string, unknown>;

/**
 * Contract schemas as the document writes them: plain JSON (TypeBox's own markers dropped), with
 * every named schema inside another replaced by a reference to its component.
 */
export class DocumentSchemas {
  private readonly names = new Map<object, string>(
    Object.entries(COMPONENT_SCHEMAS).map(([name, schema]) => [schema, name]),
  );

  /** A schema as it appears in an operation: a reference when it is named. */
  reference(schema: TSchema): Json {
    const name = this.names.get(schema);
    return name ? { $ref: `#/components/schemas/${name}` } : this.write(schema);
  }

  components(): Record<string, Json> {
    return Object.fromEntries(
      Object.entries(COMPONENT_SCHEMAS).map(([name, schema]) => [name, this.write(schema)]),
    );
  }

  /** The schema itself in full, its named parts as references. */
  private write(schema: object): Json {
    return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, this.value(value)]));
  }

  private value(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => this.value(item));
    if (value === null || typeof value !== 'object') return value;
    const name = this.names.get(value);
    return name ? { $ref: `#/components/schemas/${name}` } : this.write(value);
  }
}

/** A schema in full, as plain JSON (for examples, which need every field). */
export const plain = (schema: TSchema): Json => JSON.parse(JSON.stringify(schema)) as Json;
