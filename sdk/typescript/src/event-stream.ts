import { ApiError } from './errors';
import type { components } from './generated/openapi';

export type Event = components['schemas']['Event'];

export interface StreamOptions {
  /** Resume after this event (what `lastEventId` of an earlier stream held); else start with the next event. */
  lastEventId?: string;
  /** Ends the stream (the iterator then finishes). */
  signal?: AbortSignal;
  /**
   * A connection silent this long (no event, no heartbeat) is taken for dead and reopened.
   * Default 45 s: three of the gateway's 15 s heartbeats.
   */
  idleTimeoutMs?: number;
  /** Told each time a connection is open and ready (the first, and each reconnection). */
  onOpen?: () => void;
  /** Told of each reconnection (why, and how many in a row), e.g. to log it. */
  onReconnect?: (reason: unknown, attempt: number) => void;
}

/** What the stream needs from the client: a request for the stream with the right headers. */
export type OpenStream = (lastEventId: string | undefined, signal: AbortSignal) => Promise<Response>;

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 10_000;
/** Statuses after which opening again may work: a gateway restarting, overloaded, or the stream slots full. */
const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/**
 * The account's live events as an async iterator that resumes by itself: when the connection
 * ends or fails (a gateway restart, a network cut, a silent connection), it reopens the stream
 * with `Last-Event-ID`, so every event comes once, in order, with no gap. Errors that retrying
 * cannot fix (401, 403, a 400 on an unknown `lastEventId`) end it by throwing an ApiError.
 */
export class EventStream implements AsyncIterableIterator<Event> {
  private last: string | undefined;
  private readonly abort = new AbortController();
  private readonly iterator: AsyncGenerator<Event>;

  constructor(
    private readonly open: OpenStream,
    private readonly options: StreamOptions = {},
  ) {
    this.last = options.lastEventId;
    options.signal?.addEventListener('abort', () => this.abort.abort(), { once: true });
    if (options.signal?.aborted) this.abort.abort();
    this.iterator = this.run();
  }

  /** The id of the last event handed out: give it as `lastEventId` to resume in a later process. */
  get lastEventId(): string | undefined {
    return this.last;
  }

  next(): Promise<IteratorResult<Event>> {
    return this.iterator.next();
  }

  /** Closes the connection (a `break` out of `for await` does this too). */
  async return(): Promise<IteratorResult<Event>> {
    this.abort.abort();
    return this.iterator.return(undefined);
  }

  close(): Promise<IteratorResult<Event>> {
    return this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private async *run(): AsyncGenerator<Event> {
    let attempt = 0;
    while (!this.abort.signal.aborted) {
      let reason: unknown;
      try {
        for await (const event of this.connect(() => (attempt = 0))) yield event;
        reason = new Error('the stream ended');
      } catch (error) {
        if (this.abort.signal.aborted) return;
        if (error instanceof ApiError && !RETRYABLE.has(error.status)) throw error;
        reason = error;
      }
      if (this.abort.signal.aborted) return;
      attempt += 1;
      this.options.onReconnect?.(reason, attempt);
      await sleep(Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1)), this.abort.signal);
    }
  }

  /** One connection: its events, until it ends, fails or goes silent. */
  private async *connect(opened: () => void): AsyncGenerator<Event> {
    const connection = new AbortController();
    const stop = () => connection.abort();
    this.abort.signal.addEventListener('abort', stop, { once: true });
    const idleMs = this.options.idleTimeoutMs ?? 45_000;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
    };
    try {
      alive();
      const response = await this.open(this.last, connection.signal);
      if (!response.ok) throw await ApiError.from(response);
      if (!response.body) throw new Error('the stream has no body');
      opened();
      this.options.onOpen?.();
      const parser = new SseParser();
      const decoder = new TextDecoder();
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        alive();
        for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
          if (!message.data) continue;
          const event = JSON.parse(message.data) as Event;
          if (message.id) this.last = message.id;
          yield event;
        }
      }
    } catch (error) {
      throw connection.signal.aborted && !this.abort.signal.aborted
        ? (connection.signal.reason ?? error)
        : error;
    } finally {
      clearTimeout(idle);
      this.abort.signal.removeEventListener('abort', stop);
      connection.abort();
    }
  }
}

/** One Server-Sent Events message: the fields the stream uses. */
interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/** The text/event-stream format, fed chunk by chunk; comments (heartbeats) are skipped. */
export class SseParser {
  private buffer = '';
  private message: SseMessage = { data: '' };
  private hasData = false;

  push(text: string): SseMessage[] {
    this.buffer += text;
    const messages: SseMessage[] = [];
    let end: number;
    while ((end = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, end);
      const newline = this.buffer.startsWith('\r\n', end) ? 2 : 1;
      // A lone \r at the end of a chunk may be the first half of \r\n: wait for more.
      if (newline === 1 && this.buffer[end] === '\r' && end === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(end + newline);
      if (line === '') {
        if (this.hasData || this.message.id) messages.push(this.message);
        this.message = { data: '' };
        this.hasData = false;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') {
        this.message.data = this.hasData ? `${this.message.data}\n${value}` : value;
        this.hasData = true;
      } else if (field === 'id') this.message.id = value;
      else if (field === 'event') this.message.event = value;
    }
    return messages;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
