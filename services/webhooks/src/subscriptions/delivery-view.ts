import type { DeliveryStatus, DeliveryView } from '@app/contracts';

/** A row of webhooks.deliveries as the API reads it (DELIVERY_COLUMNS). */
export interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  created_at: Date;
  completed_at: Date | null;
}

export const DELIVERY_COLUMNS = `id, subscription_id, event_id, event_type, status, attempt_count, next_attempt_at,
  last_attempt_at, last_status_code, created_at, completed_at`;

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** The API's view of a delivery (next_attempt_at only while it is pending). */
export function toDeliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    webhook_id: row.subscription_id,
    event_id: row.event_id,
    event_type: row.event_type as DeliveryView['event_type'],
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    last_attempt_at: iso(row.last_attempt_at),
    last_status_code: row.last_status_code,
    created_at: row.created_at.toISOString(),
    completed_at: iso(row.completed_at),
  };
}
