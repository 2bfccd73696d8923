import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One statement adds counts to the analytics slots: `conversations.add_to_analytics_slots`, an
 * upsert of whole slot rows (every counter; a count a writer does not keep is 0). The triggers
 * that count conversations, closes, messages and leads, and the compaction job that folds the
 * stripes of past slots (analytics.sql.ts), all call it, so a counter added to the table is added
 * to the sum in this one place. Before, each trigger and the compaction job wrote their own
 * `ON CONFLICT ... DO UPDATE` (1764000000000-analytics-rollups, 1764500000000-first-responses-per-row).
 *
 * PL/pgSQL rather than SQL: a PL/pgSQL function keeps its statement's plan for the session, so a
 * trigger's call costs one planned insert as before. Each trigger keeps what else it did.
 */
/** Each trigger function: the time column that picks the slot, the counters in the table's order, anything else it does. */
const TRIGGERS: Record<string, { at: string; counts: string; also?: string }> = {
  analytics_conversations_inserted: {
    at: 'created_at',
    counts: `count(*), 0, 0, 0, 0, 0, 0`,
    // Imported already closed (seeds, migrations): the close is history too.
    also: `INSERT INTO conversations.analytics_closures (account_id, conversation_id, closed_at, resolution_ms)
        SELECT account_id, id, closed_at, (extract(epoch FROM closed_at - created_at) * 1000)::bigint
          FROM new_rows WHERE status = 'closed' AND closed_at IS NOT NULL;`,
  },
  analytics_closures_inserted: {
    at: 'closed_at',
    counts: `0, count(*), 0, 0, 0, 0, 0`,
  },
  analytics_messages_inserted: {
    at: 'created_at',
    counts: `0, 0, count(*) FILTER (WHERE sender = 'visitor'), count(*) FILTER (WHERE sender = 'agent'),
             count(*) FILTER (WHERE sender = 'bot'), count(*) FILTER (WHERE sender = 'system'), 0`,
  },
  analytics_leads_inserted: {
    at: 'created_at',
    counts: `0, 0, 0, 0, 0, 0, count(*)`,
  },
};

export class AnalyticsSlotUpsert1766600000000 implements MigrationInterface {
  name = 'AnalyticsSlotUpsert1766600000000';

  async up(db: QueryRunner): Promise<void> {
    // The rows in the table's column order: account_id, slot, stripe, then the counters.
    await db.query(`
      CREATE FUNCTION conversations.add_to_analytics_slots(counts conversations.analytics_slots[])
      RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO conversations.analytics_slots AS s SELECT * FROM unnest(counts)
        ON CONFLICT (account_id, slot, stripe) DO UPDATE SET
          conversations_started = s.conversations_started + EXCLUDED.conversations_started,
          conversations_closed = s.conversations_closed + EXCLUDED.conversations_closed,
          messages_visitor = s.messages_visitor + EXCLUDED.messages_visitor,
          messages_agent = s.messages_agent + EXCLUDED.messages_agent,
          messages_bot = s.messages_bot + EXCLUDED.messages_bot,
          messages_system = s.messages_system + EXCLUDED.messages_system,
          leads_captured = s.leads_captured + EXCLUDED.leads_captured;
      END $$`);
    // In this migration's transaction: no insert runs between a trigger's old body and its new one.
    // Each statement's rows counted into their slot of its `at` column, in the writer's stripe.
    for (const [name, { at, counts, also = '' }] of Object.entries(TRIGGERS)) {
      await db.query(`
        CREATE OR REPLACE FUNCTION conversations.${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM conversations.add_to_analytics_slots(ARRAY(
            SELECT ROW(account_id, conversations.analytics_slot(${at}), pg_backend_pid() % 16, ${counts})::conversations.analytics_slots
              FROM new_rows GROUP BY account_id, conversations.analytics_slot(${at})));
          ${also}
          RETURN NULL;
        END $$`);
    }
  }

  down(): Promise<void> {
    // Nothing to undo for a rollback: the previous release's code reads and compacts the same
    // table, and the triggers count as before. Going back further is a new migration.
    return Promise.reject(
      new Error('AnalyticsSlotUpsert1766600000000 is not reverted; write a new migration instead'),
    );
  }
}
