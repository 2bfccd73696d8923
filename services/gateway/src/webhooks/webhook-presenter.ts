import { ALL_EVENTS, DeliveryView, SubscribedEvent, WebhookView } from '@app/contracts';
import { Dialect, EVENT_NAMES, PublicEventType, renderEventType } from '@app/dialects';

const isPublic = (type: string): type is PublicEventType => type in EVENT_NAMES;

/** Event names in the output dialect (`*` and `webhook.test` read the same in every dialect). */
export function presentEventName(type: string, dialect: Dialect): string {
  return isPublic(type) ? renderEventType(type, dialect) : type;
}

export function presentWebhook<T extends WebhookView>(view: T, dialect: Dialect) {
  return {
    ...view,
    events: view.events.map((e: SubscribedEvent) => (e === ALL_EVENTS ? e : presentEventName(e, dialect))),
  };
}

export function presentDelivery<T extends DeliveryView>(view: T, dialect: Dialect) {
  return { ...view, event_type: presentEventName(view.event_type, dialect) };
}
