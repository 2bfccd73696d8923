import {
  ALL_EVENTS,
  EventRpc,
  parseInstant,
  REPLAY_MAX_EVENTS,
  REPLAY_PART_EVENTS,
  type ReplayWebhookBody,
  type SubscribedEvent,
  WebhookRpc,
} from '@app/contracts';
import { type EventType, PUBLIC_EVENT_TYPES } from '@app/dialects';
import { DomainError } from '@app/errors';
import type { RpcClient } from '@app/messaging';
import type { CallContext } from '../http/request-state';

/** The types a list of subscribed names stands for (`*`: the four public ones), each once. */
const typesOf = (events: SubscribedEvent[]): EventType[] => [
  ...new Set(events.flatMap((name) => (name === ALL_EVENTS ? [...PUBLIC_EVENT_TYPES] : [name]))),
];

const iso = (text: string) => new Date(parseInstant(text)!).toISOString();

/**
 * A webhook replay (docs/webhooks.md, "Replay"): the stored events of a window, read from the
 * events store oldest first in parts, each part handed to the webhooks service as new deliveries
 * under the events' own ids (so the same `webhook-id`), signed with the current secret. The
 * window is counted first: over REPLAY_MAX_EVENTS it is refused before anything is sent.
 */
export class WebhookReplay {
  constructor(
    private readonly conversations: RpcClient,
    private readonly webhooks: RpcClient,
  ) {}

  async replay(
    call: CallContext,
    webhookId: string,
    body: Omit<ReplayWebhookBody, 'types'> & { types?: SubscribedEvent[] },
  ): Promise<{ events: number }> {
    const webhook = await this.webhooks.call(WebhookRpc.get, call, { webhookId });
    if (webhook.status !== 'enabled') {
      throw new DomainError(
        'webhook_disabled',
        `Webhook ${webhookId} is disabled; enable it (PATCH status "enabled") first.`,
      );
    }
    const since = iso(body.since);
    const until = body.until === undefined ? new Date().toISOString() : iso(body.until);
    if (since >= until) throw DomainError.validation([{ field: 'until', message: 'must be after since' }]);
    const window = { types: typesOf(body.types ?? webhook.events), since, until };
    const { count } = await this.conversations.call(EventRpc.countWindow, call, window);
    if (count > REPLAY_MAX_EVENTS) {
      throw new DomainError(
        'replay_too_large',
        `The window holds ${count} events, over the ${REPLAY_MAX_EVENTS} one replay re-delivers; replay a shorter window.`,
      );
    }
    let replayed = 0;
    let after: string | undefined;
    for (let part = 0; replayed < REPLAY_MAX_EVENTS; part++) {
      const page = await this.conversations.call(EventRpc.window, call, {
        ...window,
        limit: Math.min(REPLAY_PART_EVENTS, REPLAY_MAX_EVENTS - replayed),
        ...(after !== undefined && { after }),
      });
      if (page.data.length > 0) {
        // A retry under the same Idempotency-Key applies each part once.
        const partCall = { ...call, commandId: call.commandId && `${call.commandId}.${part}` };
        const sent = await this.webhooks.call(WebhookRpc.replay, partCall, { webhookId, events: page.data });
        replayed += sent.events;
      }
      if (page.next === null) break;
      after = page.next;
    }
    return { events: replayed };
  }
}
