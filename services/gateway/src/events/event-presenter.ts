import { type EventView, renderEventData } from '@app/contracts';
import { type Dialect, renderEventType } from '@app/dialects';

/** An event as a response in `dialect` shows it: its type and the statuses in its data rendered. */
export const presentEvent = (event: EventView, dialect: Dialect) => ({
  ...event,
  type: renderEventType(event.type, dialect),
  data: renderEventData(event.data, dialect),
});
