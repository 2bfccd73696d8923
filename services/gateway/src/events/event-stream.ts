import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { EventView } from '@app/contracts';
import type { Dialect } from '@app/dialects';
import { presentEvent } from './event-presenter';

export interface EventStreamOptions {
  heartbeatMs: number;
  /** Events held for the client (while the backlog is read, or while it does not read) before it is dropped. */
  bufferLimit: number;
}

/** The headers a stream starts with (and a HEAD request gets, without the stream). */
export const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  // Proxies (nginx) pass each event on as it comes instead of buffering the response.
  'x-accel-buffering': 'no',
} as const;

/**
 * One open `GET /v1/events/stream`: Server-Sent Events on the raw response. It is registered for
 * its account's live events before its backlog (a resume) is read; live events arriving meanwhile
 * are held, and sent after the backlog except those the backlog had (the live feed's first
 * events may be the backlog's last ones: both follow publication order). A client that falls
 * more than `bufferLimit` events behind is disconnected; it resumes with Last-Event-ID.
 */
export class EventStream {
  readonly id = randomUUID();
  private held: EventView[] | undefined = [];
  /** Ids the backlog sent, until the first live event it did not have. */
  private sentInBacklog = new Set<string>();
  /** Events written since the socket's buffer filled (reset on `drain`). */
  private unread = 0;
  private heartbeat?: NodeJS.Timeout;
  private closed = false;
  private sent = 0;

  constructor(
    readonly accountId: string,
    /** The API key the stream was opened with: a change to it ends the stream. */
    readonly keyId: string,
    private readonly dialect: Dialect,
    private readonly response: ServerResponse,
    private readonly options: EventStreamOptions,
    private readonly onClose: (stream: EventStream) => void,
  ) {
    response.once('close', () => this.close());
    response.on('drain', () => (this.unread = 0));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Events written to the client. */
  get eventsSent(): number {
    return this.sent;
  }

  /** Writes the status line and headers, then a heartbeat comment whenever the interval passes. */
  start(headers: Record<string, string | string[] | number | undefined>): void {
    if (this.closed) return;
    this.response.writeHead(200, {
      ...headers,
      ...STREAM_HEADERS,
      // Closed with its response: a gateway that stops ends its streams and keeps no idle socket.
      connection: 'close',
    });
    this.write(': stream open\n\n');
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), this.options.heartbeatMs);
  }

  /** Backlog events, in publication order. */
  sendBacklog(events: EventView[]): void {
    for (const event of events) {
      this.sentInBacklog.add(event.id);
      this.send(event);
    }
  }

  /** After the backlog: sends the held live events it did not have, then each as it comes. */
  goLive(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const event of held) this.deliver(event);
  }

  /** A live event of the account. */
  deliver(event: EventView): void {
    if (this.closed) return;
    if (this.held) {
      this.held.push(event);
      if (this.held.length > this.options.bufferLimit) this.close();
      return;
    }
    if (this.sentInBacklog.size > 0) {
      if (this.sentInBacklog.has(event.id)) return;
      this.sentInBacklog = new Set();
    }
    this.send(event);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.held = undefined;
    // Before start() the response is not the stream's yet: the error that closed it is answered.
    // A response its client closed is not ended: it would never finish.
    if (this.response.headersSent && !this.response.writableEnded && !this.response.destroyed) {
      // The socket goes with the response (no keep-alive after a stream), whatever the client does.
      this.response.end(() => this.response.socket?.destroy());
    }
    this.onClose(this);
  }

  private send(event: EventView): void {
    if (this.closed) return;
    const shown = presentEvent(event, this.dialect);
    this.write(`id: ${shown.id}\nevent: ${shown.type}\ndata: ${JSON.stringify(shown)}\n\n`);
    this.sent++;
    if (this.unread > this.options.bufferLimit) this.close();
  }

  private write(frame: string): void {
    if (this.closed || !this.response.headersSent) return;
    if (!this.response.write(frame) || this.unread > 0) this.unread++;
  }
}
