import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Fleet } from './fleet';

/** The fields of an answer the load reads: a resource's id, a problem's code. */
interface Answer {
  id?: string;
  code?: string;
  status?: unknown;
  message_count?: unknown;
}

/** What a client reads of a conversation: a reply without it is a failed request. */
const conversationRead = (answer: Answer) =>
  typeof answer.status === 'string' && typeof answer.message_count === 'number';

/** Clients writing and reading at once; with PAUSE_MS between requests, about 20-40 requests/s. */
const WORKERS = 6;
const PAUSE_MS = 40;
/** A request that takes longer than this is a failure (the gateway's own deadline is shorter). */
const REQUEST_TIMEOUT_MS = 30_000;
/** An interrupted event stream is reopened after this. */
const RECONNECT_MS = 100;

/**
 * A steady mixed load through the fleet's gateways, as integrators send it: each worker creates a
 * conversation, reads it, posts two messages, lists conversations and webhooks, closes it, over and over; each
 * write is sent under an Idempotency-Key and retried under the same key until acknowledged. Every
 * failed request (a 4xx or 5xx answer, a network error, a timeout) is recorded. Beside it, one
 * event stream stays open, reopened with Last-Event-ID whenever it ends.
 */
export class MixedLoad {
  /** Conversation id -> messages acknowledged. */
  readonly acknowledged = new Map<string, number>();
  readonly failures: string[] = [];
  readonly latenciesMs: number[] = [];
  readonly stream: EventStreamFollower;
  private running = true;
  private readonly started = Date.now();
  private stoppedAt?: number;
  private readonly workers: Array<Promise<void>>;

  constructor(
    private readonly fleet: Fleet,
    private readonly apiKey: string,
  ) {
    this.stream = new EventStreamFollower(fleet, apiKey, (failure) => this.failures.push(failure));
    this.workers = Array.from({ length: WORKERS }, () => this.work());
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await Promise.all(this.workers);
    this.stoppedAt = Date.now();
    await this.stream.stop();
  }

  figures(): { requests: number; perSecond: number; p99Ms: number } {
    const sorted = [...this.latenciesMs].sort((a, b) => a - b);
    const seconds = ((this.stoppedAt ?? Date.now()) - this.started) / 1000;
    return {
      requests: sorted.length,
      perSecond: Math.round(sorted.length / seconds),
      p99Ms: sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? 0,
    };
  }

  private async work(): Promise<void> {
    while (this.running) {
      const created = await this.write('POST', '/v1/conversations', { subject: 'Upgrade', status: 'active' });
      if (!created) return;
      const id = created.id!;
      this.acknowledged.set(id, 0);
      if (!(await this.read(`/v1/conversations/${id}`, conversationRead))) return;
      for (const content of ['first', 'second']) {
        if (!(await this.write('POST', `/v1/conversations/${id}/messages`, { sender: 'visitor', content })))
          return;
        this.acknowledged.set(id, this.acknowledged.get(id)! + 1);
      }
      if (!(await this.read('/v1/conversations?limit=5'))) return;
      if (!(await this.read('/v1/webhooks'))) return;
      if (!(await this.write('PATCH', `/v1/conversations/${id}`, { status: 'closed' }))) return;
    }
  }

  private read(path: string, readable?: (answer: Answer) => boolean): Promise<Answer | undefined> {
    return this.retried('GET', path, undefined, undefined, readable);
  }

  /** One write, retried under one Idempotency-Key until acknowledged; undefined once stopped. */
  private write(method: string, path: string, body: unknown): Promise<Answer | undefined> {
    return this.retried(method, path, body, randomUUID());
  }

  private async retried(
    method: string,
    path: string,
    body?: unknown,
    key?: string,
    readable: (answer: Answer) => boolean = () => true,
  ): Promise<Answer | undefined> {
    for (;;) {
      const started = Date.now();
      try {
        const response = await this.fleet.through((gateway) =>
          fetch(`${gateway}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${this.apiKey}`,
              ...(body !== undefined && { 'content-type': 'application/json' }),
              ...(key && { 'idempotency-key': key }),
            },
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          }),
        );
        const answer = (await response.json()) as Answer;
        this.latenciesMs.push(Date.now() - started);
        if (response.ok && readable(answer)) {
          await sleep(PAUSE_MS);
          return answer;
        }
        this.failures.push(
          `${method} ${path}: ${response.status} ${response.ok ? 'a field the client reads is missing' : (answer.code ?? '')}`,
        );
      } catch (error) {
        this.latenciesMs.push(Date.now() - started);
        this.failures.push(`${method} ${path}: ${(error as Error).message}`);
      }
      if (!this.running) return undefined;
      await sleep(100);
    }
  }
}

/**
 * `GET /v1/events/stream` held open on a gateway of the rotation; when the stream ends (its
 * gateway stopped), reopened on another with `Last-Event-ID`, the id of the last event seen.
 */
export class EventStreamFollower {
  /** Every event id received, in order, copies included. */
  readonly ids: string[] = [];
  connections = 0;
  private controller = new AbortController();
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly fleet: Fleet,
    private readonly apiKey: string,
    private readonly failed: (failure: string) => void,
  ) {
    this.done = this.follow();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.controller.abort();
    await this.done;
  }

  private async follow(): Promise<void> {
    while (this.running) {
      this.controller = new AbortController();
      try {
        await this.fleet.through(async (gateway) => {
          const response = await fetch(`${gateway}/v1/events/stream`, {
            headers: {
              authorization: `Bearer ${this.apiKey}`,
              ...(this.ids.length > 0 && { 'last-event-id': this.ids[this.ids.length - 1] }),
            },
            signal: this.controller.signal,
          });
          if (!response.ok) {
            this.failed(`GET /v1/events/stream: ${response.status}`);
            return;
          }
          this.connections++;
          // A stream cut by its gateway's stop is no failure: it is reopened below.
          await this.read(response.body!).catch(() => undefined);
        }, false);
      } catch (error) {
        if (this.running) this.failed(`GET /v1/events/stream: ${(error as Error).message}`);
      }
      if (this.running) await sleep(RECONNECT_MS);
    }
  }

  /** Records each event's `id:` until the stream ends. */
  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const id = /^id: ?(.+)$/m.exec(buffer.slice(0, end))?.[1];
        if (id) this.ids.push(id);
        buffer = buffer.slice(end + 2);
      }
    }
  }
}
