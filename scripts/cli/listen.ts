import { EVENT_NAMES, parseEventType, type EventType } from '@app/dialects';
import { Client, type Event } from '../../sdk/typescript/src';
import { newSecret, signatureHeader } from '../../services/webhooks/src/delivery/signature';

/**
 * `cms listen`: the account's events forwarded to a local URL as signed webhooks (docs/clients.md,
 * "cms listen"). It follows the live stream with the SDK (which resumes with Last-Event-ID after a
 * gateway restart or a cut connection) and POSTs each event as the webhooks service would: the same
 * body (`type`, `timestamp`, `sequence`, `data`), `webhook-id` the event id, signed the Standard
 * Webhooks way with a secret of its own, printed first. No subscription is made, so the receiver
 * may be on 127.0.0.1 without WEBHOOK_ALLOW_PRIVATE_TARGETS and without a public URL.
 */

export interface ListenOptions {
  apiKey: string;
  forwardTo: string;
  apiUrl: string;
  /** Only these types (canonical names); every type when absent. */
  events?: EventType[];
  /** First forward the stored events created since then, oldest first, then the live ones. */
  since?: Date;
}

export interface ListenOutput {
  /** One JSON line on stdout. */
  print(value: unknown): void;
  /** A progress line on stderr. */
  note(text: string): void;
}

/** How long the receiver has to answer one request. */
const FORWARD_TIMEOUT_MS = 10_000;
/** A receiver that cannot be reached (not started yet, restarting) is tried again for this long. */
const UNREACHABLE_RETRY_MS = 30_000;

/** `--events a,b`: event types in any dialect; `*` for every type. */
export function parseEventTypes(text: string): EventType[] | { problem: string } {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) return { problem: 'name at least one event type' };
  if (names.includes('*')) return Object.keys(EVENT_NAMES) as EventType[];
  const types: EventType[] = [];
  for (const name of names) {
    const type = parseEventType(name);
    if (!type) return { problem: `unknown event type "${name}"; use ${Object.keys(EVENT_NAMES).join(', ')}` };
    types.push(type);
  }
  return types;
}

/** The webhook body of an event, as the webhooks service renders it (English, the stream's dialect). */
export function webhookBody(event: Event): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.created_at,
    sequence: event.sequence,
    data: event.data,
  });
}

/** Forwards events until `signal` aborts; rejects when the API refuses the key or the stream. */
export async function listen(
  options: ListenOptions,
  output: ListenOutput,
  signal: AbortSignal,
): Promise<void> {
  const client = new Client({ apiKey: options.apiKey, baseUrl: options.apiUrl });
  // A wrong key or URL is reported at once, before anything is printed.
  await client.events.list({ limit: 1 });
  const secret = newSecret();

  const wanted = options.events && new Set(options.events.map((type) => EVENT_NAMES[type].en));
  const forward = async (event: Event) => {
    if (wanted && !wanted.has(event.type)) return;
    const body = webhookBody(event);
    const post = () => {
      const timestamp = Math.floor(Date.now() / 1000);
      return fetch(options.forwardTo, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'cms-listen',
          'webhook-id': event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader([secret], event.id, timestamp, body),
        },
        body,
        signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
      });
    };
    try {
      const response = await untilReachable(post, signal);
      await response.body?.cancel();
      output.print({ id: event.id, type: event.type, status: response.status });
    } catch (error) {
      if (signal.aborted) return;
      const { message, cause } = error as Error & { cause?: Error };
      output.print({ id: event.id, type: event.type, error: cause?.message ?? message });
    }
  };

  let printed = false;
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const stream = client.events.stream({
    signal,
    onOpen: () => {
      // The secret is printed once the stream is open: from then on no event is missed.
      if (!printed) output.print({ secret });
      printed = true;
      opened();
      output.note(`listening: forwarding ${options.apiUrl}'s events to ${options.forwardTo}`);
    },
    onReconnect: (reason) =>
      output.note(
        `stream interrupted (${reason instanceof Error ? reason.message : String(reason)}); resuming`,
      ),
  });
  const live = stream[Symbol.asyncIterator]();
  // The first read opens the stream; the stored events are read once it is open, so every event
  // is in one or the other (those in both are forwarded once).
  let next = live.next();
  const stored = new Set<string>();
  if (options.since) {
    await Promise.race([open, next]);
    const events: Event[] = [];
    for await (const event of client.events.iterate({
      created_after: options.since.toISOString(),
      limit: 100,
    })) {
      events.push(event);
      stored.add(event.id);
    }
    for (const event of events.reverse()) await forward(event);
  }
  try {
    for (;;) {
      const result = await next;
      if (result.done) return;
      if (!stored.has(result.value.id)) await forward(result.value);
      next = live.next();
    }
  } finally {
    await stream.close();
  }
}

/** The request, again after a connection error (the receiver not listening yet), for a while. */
async function untilReachable(post: () => Promise<Response>, signal: AbortSignal): Promise<Response> {
  const deadline = Date.now() + UNREACHABLE_RETRY_MS;
  for (let delay = 250; ; delay = Math.min(delay * 2, 4000)) {
    try {
      return await post();
    } catch (error) {
      const refused = (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
      if (!refused || signal.aborted || Date.now() + delay > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
