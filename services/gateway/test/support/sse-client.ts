import { EventSource } from 'eventsource';
import { EVENT_SPELLINGS } from '@app/dialects';

export interface StreamedEvent {
  id: string;
  /** The SSE `event:` field. */
  event: string;
  data: {
    id: string;
    type: string;
    conversation_id: string;
    sequence: number;
    created_at: string;
    data: Record<string, any>;
  };
  receivedAt: number;
}

/**
 * A real Server-Sent Events client (the `eventsource` package, as browsers behave) on
 * `GET /v1/events/stream`, collecting every event. It does not reconnect by itself: tests resume
 * explicitly with `lastEventId`, to assert exactly what a resume delivers.
 */
export class SseClient {
  readonly events: StreamedEvent[] = [];
  private readonly source: EventSource;
  private readonly opened: Promise<void>;

  constructor(
    baseUrl: string,
    apiKey: string,
    options: { lastEventId?: string; language?: string; query?: string } = {},
  ) {
    const url = `${baseUrl}/v1/events/stream${options.query ? `?${options.query}` : ''}`;
    this.source = new EventSource(url, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: {
            ...(init?.headers as Record<string, string>),
            authorization: `Bearer ${apiKey}`,
            ...(options.language && { 'accept-language': options.language }),
            ...(options.lastEventId && { 'last-event-id': options.lastEventId }),
          },
        }),
    });
    const record = (message: MessageEvent) =>
      this.events.push({
        id: message.lastEventId,
        event: message.type,
        data: JSON.parse(message.data as string),
        receivedAt: performance.now(),
      });
    for (const name of EVENT_SPELLINGS) this.source.addEventListener(name, record);
    this.opened = new Promise((resolve, reject) => {
      this.source.onopen = () => resolve();
      this.source.onerror = (error) => {
        if (this.source.readyState !== EventSource.OPEN) this.source.close();
        reject(new Error(`stream failed: ${error.message ?? error.type} (status ${error.code ?? 'none'})`));
      };
    });
  }

  /** Resolves when the stream's response arrived (after its backlog was read); rejects on an error status. */
  open(): Promise<this> {
    return this.opened.then(() => this);
  }

  close(): void {
    this.source.close();
  }

  get closedByServer(): boolean {
    return this.source.readyState === EventSource.CLOSED;
  }
}
