import { MigrationInterface, QueryRunner } from 'typeorm';

export class WebhooksSchema1764100000000 implements MigrationInterface {
  name = 'WebhooksSchema1764100000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE webhooks.subscriptions (
        id                          uuid PRIMARY KEY,
        account_id                  uuid NOT NULL,
        url                         text NOT NULL,
        -- Canonical (en) event types, or '*'.
        events                      text[] NOT NULL,
        dialect                     text NOT NULL CHECK (dialect IN ('en', 'ms', 'pl')),
        description                 text,
        status                      text NOT NULL CHECK (status IN ('enabled', 'disabled')),
        disabled_reason             text,
        secret                      text NOT NULL,
        -- After a rotation the old secret keeps signing (a second signature) for a while.
        previous_secret             text,
        previous_secret_expires_at  timestamptz(3),
        -- First failed attempt since the last success; after WEBHOOK_DISABLE_AFTER_DAYS, disabled.
        failing_since               timestamptz(3),
        created_at                  timestamptz(3) NOT NULL DEFAULT now(),
        updated_at                  timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await db.query(
      `CREATE INDEX subscriptions_account_created ON webhooks.subscriptions (account_id, created_at DESC, id DESC)`,
    );
    // The fan-out's look-up: the enabled subscriptions of an event's account.
    await db.query(
      `CREATE INDEX subscriptions_account_enabled ON webhooks.subscriptions (account_id) WHERE status = 'enabled'`,
    );

    // Each event received once: its primary key is what makes a redelivered event a no-op. Stored
    // once however many subscriptions it goes to; deliveries render it at send time.
    await db.query(`
      CREATE TABLE webhooks.events (
        id           uuid PRIMARY KEY,
        account_id   uuid NOT NULL,
        type         text NOT NULL,
        occurred_at  timestamptz(3) NOT NULL,
        data         jsonb NOT NULL,
        received_at  timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX events_received ON webhooks.events USING brin (received_at)`);

    await db.query(`
      CREATE TABLE webhooks.deliveries (
        id               uuid PRIMARY KEY,
        account_id       uuid NOT NULL,
        subscription_id  uuid NOT NULL REFERENCES webhooks.subscriptions (id) ON DELETE CASCADE,
        event_id         uuid NOT NULL,
        event_type       text NOT NULL,
        status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempt_count    integer NOT NULL DEFAULT 0,
        -- Attempts allowed in all: the schedule's length + 1, or one more after a manual retry.
        max_attempts     integer NOT NULL,
        next_attempt_at  timestamptz(3),
        last_attempt_at  timestamptz(3),
        last_status_code integer,
        -- The replica working on it, until when (renewed while it holds it; a crashed one's lapses).
        lease_owner      uuid,
        lease_until      timestamptz(3),
        created_at       timestamptz(3) NOT NULL DEFAULT now(),
        completed_at     timestamptz(3)
      )`);
    // What the dispatchers claim: due pending deliveries, oldest due first.
    await db.query(
      `CREATE INDEX deliveries_due ON webhooks.deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    // The delivery log of one subscription, newest first (status filter included).
    await db.query(
      `CREATE INDEX deliveries_subscription_created ON webhooks.deliveries (subscription_id, created_at DESC, id DESC)`,
    );
    await db.query(`CREATE INDEX deliveries_completed ON webhooks.deliveries USING brin (completed_at)`);

    await db.query(`
      CREATE TABLE webhooks.delivery_attempts (
        delivery_id    uuid NOT NULL REFERENCES webhooks.deliveries (id) ON DELETE CASCADE,
        attempt        integer NOT NULL,
        account_id     uuid NOT NULL,
        started_at     timestamptz(3) NOT NULL,
        duration_ms    integer NOT NULL,
        status_code    integer,
        response_body  text,
        error          text,
        PRIMARY KEY (delivery_id, attempt)
      )`);

    // One row per applied command (create, test, retry, rotate): a repeat gets the stored reply.
    await db.query(`
      CREATE TABLE webhooks.processed_commands (
        command_id  text PRIMARY KEY,
        account_id  uuid NOT NULL,
        pattern     text NOT NULL,
        response    jsonb,
        created_at  timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await db.query(
      `CREATE INDEX processed_commands_created ON webhooks.processed_commands USING brin (created_at)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    for (const table of [
      'processed_commands',
      'delivery_attempts',
      'deliveries',
      'events',
      'subscriptions',
    ]) {
      await db.query(`DROP TABLE webhooks.${table}`);
    }
  }
}
