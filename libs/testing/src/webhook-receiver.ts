import http, { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './eventually';

/** One request a receiver got. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
  receivedAt: number;
  path: string;
}

/** What the receiver answers: a status (and headers, body), or `hang` to never answer. */
export type ReceiverReply =
  { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

/**
 * A webhook subscriber on 127.0.0.1: records every request and answers what the test says
 * (200 by default). `close()` also ends hanging requests.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** TCP connections accepted, requests or not (an SSRF check must stop even the connection). */
  connections = 0;
  private reply: (request: ReceivedWebhook, index: number) => ReceiverReply = () => ({
    status: 200,
    body: 'ok',
  });
  private readonly hanging = new Set<ServerResponse>();

  private constructor(private readonly server: http.Server) {}

  static async start(port = 0): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server);
    server.on('connection', () => receiver.connections++);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const record = {
          headers: request.headers,
          body,
          json,
          receivedAt: Date.now(),
          path: request.url ?? '/',
        };
        const index = receiver.received.push(record) - 1;
        const reply = receiver.reply(record, index);
        if (reply === 'hang') {
          receiver.hanging.add(response);
          response.on('close', () => receiver.hanging.delete(response));
          return;
        }
        const send = () => respond(response, reply);
        if (reply.delayMs) setTimeout(send, reply.delayMs);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Answers every request with this from now on. */
  answer(reply: ReceiverReply | ((request: ReceivedWebhook, index: number) => ReceiverReply)): void {
    this.reply = typeof reply === 'function' ? reply : () => reply;
  }

  /** Waits until at least `count` requests (matching `filter`, if given) arrived; returns them. */
  waitFor(count: number, filter: (r: ReceivedWebhook) => boolean = () => true, timeoutMs = 15_000) {
    return eventually(() => {
      const found = this.received.filter(filter);
      if (found.length < count) throw new Error(`expected ${count} webhooks, got ${found.length}`);
      return found;
    }, timeoutMs);
  }

  /** Answers every request left hanging so far (as a subscriber that was slow, not gone). */
  release(reply: Exclude<ReceiverReply, 'hang'> = { status: 200 }): void {
    for (const response of this.hanging) respond(response, reply);
    this.hanging.clear();
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function respond(response: ServerResponse, reply: Exclude<ReceiverReply, 'hang'>): void {
  response.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
  response.end(reply.body ?? '');
}

/** The receivers one test file starts, closed together in its afterAll. */
export class WebhookReceivers {
  private readonly started: WebhookReceiver[] = [];

  async start(port?: number): Promise<WebhookReceiver> {
    const receiver = await WebhookReceiver.start(port);
    this.started.push(receiver);
    return receiver;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.started.map((receiver) => receiver.close()));
  }
}
