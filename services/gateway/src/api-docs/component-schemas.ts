import { type TSchema, Type } from '@sinclair/typebox';
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
  EventListResponse,
  EventResponse,
  LeadView,
  MessageInput,
  MessageView,
  UpdateWebhookBody,
  VisitorInput,
  VisitorView,
  WebhookListResponse,
  WebhookResponse,
  WebhookWithSecretResponse,
  TypedEventResponses,
} from '@app/contracts';
import { EVENT_NAMES, EVENT_TYPES, type EventType } from '@app/dialects';
import { ProblemDetailsSchema } from '@app/errors';

/** `message.received` -> `MessageReceivedEvent`. */
const eventComponentName = (type: EventType) =>
  `${type.replace(/(^|[._])(\w)/g, (_match, _separator, letter: string) => letter.toUpperCase())}Event`;

const EVENT_COMPONENTS = Object.fromEntries(
  EVENT_TYPES.map((type) => [eventComponentName(type), TypedEventResponses[type]]),
);

/**
 * An event of any type: one of the per-type schemas, told apart by `type` in any dialect (what
 * generated clients turn into a discriminated union).
 */
const AnyEvent = Type.Unsafe({
  oneOf: EVENT_TYPES.map((type) => TypedEventResponses[type]),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(
      EVENT_TYPES.flatMap((type) =>
        Object.values(EVENT_NAMES[type]).map((name) => [
          name,
          `#/components/schemas/${eventComponentName(type)}`,
        ]),
      ),
    ),
  },
});

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
  Event: AnyEvent,
  ...EVENT_COMPONENTS,
  EventList: EventListResponse,
  Problem: ProblemDetailsSchema,
};

/**
 * Schemas the service serialises with that the document shows by another, more exact one: an
 * event is written whatever its type, and documented as the union of the types.
 */
export const DOCUMENTED_AS = new Map<TSchema, string>([[EventResponse, 'Event']]);

type Json = Record<string, unknown>;

/**
 * Contract schemas as a document writes them: plain JSON (TypeBox's own markers dropped), with
 * every named schema inside another replaced by a reference to its component. The OpenAPI
 * document names COMPONENT_SCHEMAS; the AsyncAPI document (scripts/docs) names its own.
 */
export class DocumentSchemas {
  private readonly names: Map<object, string>;

  constructor(
    private readonly named: Record<string, TSchema> = COMPONENT_SCHEMAS,
    private readonly documentedAs: ReadonlyMap<TSchema, string> = new Map(),
  ) {
    this.names = new Map([
      ...Object.entries(named).map(([name, schema]): [object, string] => [schema, name]),
      ...documentedAs,
    ]);
  }

  /** A schema as it appears in an operation: a reference when it is named. */
  reference(schema: TSchema): Json {
    const name = this.names.get(schema);
    return name ? { $ref: `#/components/schemas/${name}` } : this.write(schema);
  }

  components(): Record<string, Json> {
    return Object.fromEntries(Object.entries(this.named).map(([name, schema]) => [name, this.write(schema)]));
  }

  /** A schema in full as the document shows it (its documented-as parts replaced), for examples. */
  shown(schema: TSchema): Json {
    const replace = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(replace);
      if (value === null || typeof value !== 'object') return value;
      const name = this.documentedAs.get(value as TSchema);
      const shown = name ? this.named[name] : value;
      return Object.fromEntries(Object.entries(shown).map(([key, part]) => [key, replace(part)]));
    };
    return replace(schema) as Json;
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
