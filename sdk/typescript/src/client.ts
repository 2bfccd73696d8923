import { ApiError } from './errors';
import { EventStream, type StreamOptions } from './event-stream';
import type { components, operations } from './generated/openapi';

type Schemas = components['schemas'];
type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;

export type Conversation = Schemas['Conversation'];
export type ConversationWithMessages = Schemas['ConversationWithMessages'];
export type ConversationList = Schemas['ConversationList'];
export type CreateConversation = Schemas['CreateConversation'];
export type UpdateConversation = Schemas['UpdateConversation'];
export type Message = Schemas['Message'];
export type MessagePage = Schemas['MessagePage'];
export type SendMessage = Schemas['SendMessage'];
export type Lead = Schemas['Lead'];
export type CaptureLead = Schemas['CaptureLead'];
export type Event = Schemas['Event'];
export type EventList = Schemas['EventList'];
export type EventType = Event['type'];
export type Webhook = Schemas['Webhook'];
export type WebhookWithSecret = Schemas['WebhookWithSecret'];
export type CreateWebhook = Schemas['CreateWebhook'];
export type UpdateWebhook = Schemas['UpdateWebhook'];
export type ConversationQuery = Query<'listConversations'>;
export type MessageQuery = Query<'listMessages'>;
export type EventQuery = Query<'listEvents'>;
export type StreamToken = operations['createStreamToken']['responses'][201]['content']['application/json'];
export type ReplayResult = operations['replayWebhook']['responses'][202]['content']['application/json'];
export type ReplayWebhook = NonNullable<
  operations['replayWebhook']['requestBody']
>['content']['application/json'];

export interface ClientOptions {
  /** An API key (`cms_...`), sent as `Authorization: Bearer`. */
  apiKey: string;
  /** The gateway's URL, without `/v1` (default http://127.0.0.1:3000). */
  baseUrl?: string;
  /** `en`, `ms` or `pl`: the dialect of responses (default: the path's, English). */
  language?: 'en' | 'ms' | 'pl';
  /** Another fetch (a proxy's, a test's); Node's own by default. */
  fetch?: typeof fetch;
}

/** Options of a POST that creates something: retried with the same key, it is applied once. */
export interface CreateOptions {
  idempotencyKey?: string;
}

type QueryValue = string | number | boolean | ReadonlyArray<string | number> | null | undefined;

interface RequestOptions {
  query?: object;
  body?: unknown;
  headers?: Record<string, string | undefined>;
}

/** The HTTP core: authentication, JSON in and out, errors as ApiError. */
class Http {
  readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.baseUrl = (options.baseUrl ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  url(path: string, query: object = {}): string {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query) as Array<[string, QueryValue]>) {
      if (value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
    }
    return url.toString();
  }

  headers(extra: Record<string, string | undefined> = {}): Record<string, string> {
    const headers: Record<string, string | undefined> = {
      authorization: `Bearer ${this.options.apiKey}`,
      'accept-language': this.options.language,
      ...extra,
    };
    return Object.fromEntries(
      Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
  }

  raw(
    method: string,
    path: string,
    options: RequestOptions & { signal?: AbortSignal } = {},
  ): Promise<Response> {
    const hasBody = options.body !== undefined;
    return this.fetch(this.url(path, options.query), {
      method,
      headers: this.headers({ ...(hasBody && { 'content-type': 'application/json' }), ...options.headers }),
      body: hasBody ? JSON.stringify(options.body) : undefined,
      signal: options.signal,
    });
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.raw(method, path, options);
    if (!response.ok) throw await ApiError.from(response);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

const segment = (id: string) => encodeURIComponent(id);

export class Conversations {
  constructor(private readonly http: Http) {}

  /** One page, newest first unless `order` says otherwise. */
  list(query: ConversationQuery = {}): Promise<ConversationList> {
    return this.http.request('GET', '/v1/conversations', { query });
  }

  /**
   * Every conversation the query matches, page after page (following `pagination.next`, which
   * keeps the first page's snapshot: none is repeated or skipped while others write).
   */
  async *iterate(query: ConversationQuery = {}): AsyncGenerator<Conversation> {
    let page = await this.list(query);
    for (;;) {
      yield* page.data;
      if (!page.pagination.next) return;
      page = await this.http.request<ConversationList>('GET', page.pagination.next);
    }
  }

  /** The conversation with all its messages, oldest first. */
  get(id: string): Promise<ConversationWithMessages> {
    return this.http.request('GET', `/v1/conversations/${segment(id)}`);
  }

  create(body: CreateConversation = {}, options: CreateOptions = {}): Promise<Conversation> {
    return this.http.request('POST', '/v1/conversations', {
      body,
      headers: { 'idempotency-key': options.idempotencyKey },
    });
  }

  update(id: string, body: UpdateConversation): Promise<Conversation> {
    return this.http.request('PATCH', `/v1/conversations/${segment(id)}`, { body });
  }

  close(id: string): Promise<Conversation> {
    return this.update(id, { status: 'closed' });
  }

  reopen(id: string): Promise<Conversation> {
    return this.update(id, { status: 'active' });
  }

  delete(id: string): Promise<void> {
    return this.http.request('DELETE', `/v1/conversations/${segment(id)}`);
  }

  captureLead(id: string, body: CaptureLead): Promise<Lead> {
    return this.http.request('POST', `/v1/conversations/${segment(id)}/lead`, { body });
  }

  getLead(id: string): Promise<Lead> {
    return this.http.request('GET', `/v1/conversations/${segment(id)}/lead`);
  }
}

export class Messages {
  constructor(private readonly http: Http) {}

  list(conversationId: string, query: MessageQuery = {}): Promise<MessagePage> {
    return this.http.request('GET', `/v1/conversations/${segment(conversationId)}/messages`, { query });
  }

  /** Every message of the conversation, page after page (oldest first unless `order` says otherwise). */
  async *iterate(conversationId: string, query: MessageQuery = {}): AsyncGenerator<Message> {
    let after = query.after;
    for (;;) {
      const page = await this.list(conversationId, { ...query, after });
      yield* page.data;
      if (!page.pagination.next) return;
      after = page.pagination.next;
    }
  }

  send(conversationId: string, body: SendMessage, options: CreateOptions = {}): Promise<Message> {
    return this.http.request('POST', `/v1/conversations/${segment(conversationId)}/messages`, {
      body,
      headers: { 'idempotency-key': options.idempotencyKey },
    });
  }
}

export class Events {
  constructor(private readonly http: Http) {}

  /** One page, newest first. */
  list(query: EventQuery = {}): Promise<EventList> {
    return this.http.request('GET', '/v1/events', { query });
  }

  /** Every event the query matches, newest first, page after page. */
  async *iterate(query: EventQuery = {}): AsyncGenerator<Event> {
    let after = query.after;
    for (;;) {
      const page = await this.list({ ...query, after });
      yield* page.data;
      if (!page.pagination.next) return;
      after = page.pagination.next;
    }
  }

  get(id: string): Promise<Event> {
    return this.http.request('GET', `/v1/events/${segment(id)}`);
  }

  /**
   * The live stream as an async iterator that reconnects by itself with `Last-Event-ID`:
   * `for await (const event of client.events.stream()) ...`. Its `lastEventId` resumes a later one.
   */
  stream(options: StreamOptions = {}): EventStream {
    return new EventStream(
      (lastEventId, signal) =>
        this.http.raw('GET', '/v1/events/stream', {
          headers: { accept: 'text/event-stream', 'last-event-id': lastEventId },
          signal,
        }),
      options,
    );
  }

  /** A short-lived token for a browser's `EventSource` (`/v1/events/stream?token=...`): never put a key in a page. */
  createStreamToken(): Promise<StreamToken> {
    return this.http.request('POST', '/v1/events/stream-tokens');
  }
}

export class Webhooks {
  constructor(private readonly http: Http) {}

  /** The new subscription with its signing `secret`, shown only now. */
  create(body: CreateWebhook): Promise<WebhookWithSecret> {
    return this.http.request('POST', '/v1/webhooks', { body });
  }

  get(id: string): Promise<Webhook> {
    return this.http.request('GET', `/v1/webhooks/${segment(id)}`);
  }

  update(id: string, body: UpdateWebhook): Promise<Webhook> {
    return this.http.request('PATCH', `/v1/webhooks/${segment(id)}`, { body });
  }

  delete(id: string): Promise<void> {
    return this.http.request('DELETE', `/v1/webhooks/${segment(id)}`);
  }

  /** Re-delivers the stored events of a window, in order, with their original `webhook-id`. */
  replay(id: string, body: ReplayWebhook): Promise<ReplayResult> {
    return this.http.request('POST', `/v1/webhooks/${segment(id)}/replay`, { body });
  }
}

/**
 * The API's client: `new Client({ apiKey, baseUrl })`, then `client.conversations`,
 * `client.messages`, `client.events` and `client.webhooks`. Every failure is an ApiError.
 */
export class Client {
  readonly conversations: Conversations;
  readonly messages: Messages;
  readonly events: Events;
  readonly webhooks: Webhooks;

  constructor(options: ClientOptions) {
    const http = new Http(options);
    this.conversations = new Conversations(http);
    this.messages = new Messages(http);
    this.events = new Events(http);
    this.webhooks = new Webhooks(http);
  }
}
