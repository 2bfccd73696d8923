import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import amqp from 'amqplib';
import { CLOUDEVENTS_SOURCE, CONVERSATIONS_EVENTS_EXCHANGE } from '@app/contracts';

export interface FanOutResult {
  label: string;
  subscriptions: number;
  events: number;
  deliveries: number;
  /** Events whose every delivery arrived, per second of the whole run. */
  eventsPerSecond: number;
  deliveriesPerSecond: number;
  /** From the event's `time` (set when it is published) to its arrival at the receiver. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  seconds: number;
}

export interface FanOutScenario {
  apiBase: string;
  apiKey: string;
  accountId: string;
  amqpUrl: string;
  subscriptions: number;
  events: number;
  /** Publish at this steady rate (latency at a given load) instead of as fast as confirms allow. */
  eventsPerSecond?: number;
  /** The run gives up (and throws) if the deliveries have not all arrived by then. */
  timeoutMs?: number;
}

/** A subscriber on 127.0.0.1 that answers 204 at once and notes each delivery's latency. */
class LatencyReceiver {
  readonly latencies: number[] = [];
  private expected = Infinity;
  private done?: () => void;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<LatencyReceiver> {
    const server = http.createServer();
    const receiver = new LatencyReceiver(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const arrived = Date.now();
        const { timestamp } = JSON.parse(Buffer.concat(chunks).toString()) as { timestamp: string };
        response.writeHead(204).end();
        receiver.latencies.push(arrived - Date.parse(timestamp));
        if (receiver.latencies.length >= receiver.expected) receiver.done?.();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  waitFor(count: number, timeoutMs: number): Promise<void> {
    this.expected = count;
    if (this.latencies.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.latencies.length} of ${count} deliveries within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.done = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The gateway answers 503 until a webhooks service replica consumes its RPC queue. */
async function waitForSubscriptionsApi(scenario: FanOutScenario, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${scenario.apiBase}/v1/webhooks`, {
      headers: { authorization: `Bearer ${scenario.apiKey}` },
    });
    if (response.ok) return;
    if (Date.now() > deadline) throw new Error(`webhooks API not available: ${response.status}`);
    await sleep(200);
  }
}

async function subscribe(scenario: FanOutScenario, url: string): Promise<void> {
  const response = await fetch(`${scenario.apiBase}/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${scenario.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events: ['conversation.started'] }),
  });
  if (response.status !== 201)
    throw new Error(`subscription not created: ${response.status} ${await response.text()}`);
}

/** Publishes `count` conversation.started events of the account straight onto the exchange. */
async function publishEvents(
  amqpUrl: string,
  accountId: string,
  count: number,
  perSecond?: number,
): Promise<void> {
  const connection = await amqp.connect(amqpUrl);
  try {
    const channel = await connection.createConfirmChannel();
    const started = Date.now();
    for (let i = 0; i < count; i++) {
      if (perSecond) await sleep(started + (i * 1000) / perSecond - Date.now());
      const conversationId = randomUUID();
      const event = {
        specversion: '1.0',
        id: randomUUID(),
        source: CLOUDEVENTS_SOURCE,
        type: 'conversation.started',
        time: new Date().toISOString(),
        subject: conversationId,
        datacontenttype: 'application/json',
        accountid: accountId,
        data: { conversation: { id: conversationId, status: 'active' } },
      };
      channel.publish(CONVERSATIONS_EVENTS_EXCHANGE, event.type, Buffer.from(JSON.stringify(event)), {
        persistent: true,
      });
      // Unpaced, confirms every 100 events keep the publisher from racing far ahead of the broker.
      if (!perSecond && i % 100 === 99) await channel.waitForConfirms();
    }
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

/**
 * One account with `subscriptions` subscriptions to one receiver; `events` events published on
 * `conversations.events` as the conversations service would; measured until every delivery arrived.
 */
export async function benchFanOut(scenario: FanOutScenario): Promise<FanOutResult> {
  const receiver = await LatencyReceiver.start();
  try {
    await waitForSubscriptionsApi(scenario);
    for (let i = 0; i < scenario.subscriptions; i++) await subscribe(scenario, receiver.url);
    const deliveries = scenario.subscriptions * scenario.events;
    const started = Date.now();
    const arrived = receiver.waitFor(deliveries, scenario.timeoutMs ?? 180_000);
    await publishEvents(scenario.amqpUrl, scenario.accountId, scenario.events, scenario.eventsPerSecond);
    await arrived;
    const seconds = (Date.now() - started) / 1000;
    const sorted = [...receiver.latencies].sort((a, b) => a - b);
    return {
      label: `webhooks/fan-out x${scenario.subscriptions}${scenario.eventsPerSecond ? ` at ${scenario.eventsPerSecond}/s` : ''}`,
      subscriptions: scenario.subscriptions,
      events: scenario.events,
      deliveries,
      eventsPerSecond: scenario.events / seconds,
      deliveriesPerSecond: deliveries / seconds,
      latencyP50Ms: percentile(sorted, 50),
      latencyP99Ms: percentile(sorted, 99),
      seconds,
    };
  } finally {
    await receiver.close();
  }
}

export function formatFanOut(row: FanOutResult): string {
  return [
    row.label.padEnd(28),
    `${row.events} events`.padStart(12),
    `${row.deliveries} deliveries`.padStart(18),
    `${row.eventsPerSecond.toFixed(0)} events/s`.padStart(16),
    `${row.deliveriesPerSecond.toFixed(0)} deliveries/s`.padStart(20),
    `p50 ${row.latencyP50Ms} ms`.padStart(12),
    `p99 ${row.latencyP99Ms} ms`.padStart(12),
  ].join(' ');
}
