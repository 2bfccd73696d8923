import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763856000000 implements MigrationInterface {
  name = 'InitialSchema1763856000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE conversations.conversations (
        id              uuid PRIMARY KEY,
        account_id      uuid NOT NULL,
        status          text NOT NULL CHECK (status IN ('active', 'pending', 'closed')),
        visitor_name    text,
        visitor_email   text,
        visitor_phone   text,
        subject         text,
        metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
        message_count   integer NOT NULL DEFAULT 0,
        last_message_at timestamptz(3),
        created_at      timestamptz(3) NOT NULL,
        updated_at      timestamptz(3) NOT NULL,
        closed_at       timestamptz(3),
        -- The creating transaction, so a paged list can hide rows its snapshot does not see.
        created_xid     xid8 NOT NULL DEFAULT pg_current_xact_id()
      )`);
    // Serves the list (newest first) with and without a status filter, and its snapshot counts.
    await db.query(
      `CREATE INDEX conversations_account_created ON conversations.conversations (account_id, created_at DESC, id DESC)`,
    );
    await db.query(
      `CREATE INDEX conversations_account_status_created ON conversations.conversations (account_id, status, created_at DESC, id DESC)`,
    );
    await db.query(
      `CREATE INDEX conversations_account_xid ON conversations.conversations (account_id, created_xid)`,
    );

    await db.query(`
      CREATE TABLE conversations.messages (
        id              uuid PRIMARY KEY,
        conversation_id uuid NOT NULL REFERENCES conversations.conversations (id) ON DELETE CASCADE,
        account_id      uuid NOT NULL,
        position        integer NOT NULL,
        sender          text NOT NULL CHECK (sender IN ('agent', 'visitor', 'bot', 'system')),
        content         text NOT NULL,
        created_at      timestamptz(3) NOT NULL,
        UNIQUE (conversation_id, position)
      )`);
    await db.query(
      `CREATE INDEX messages_account_created ON conversations.messages (account_id, created_at)`,
    );

    await db.query(`
      CREATE TABLE conversations.leads (
        id              uuid PRIMARY KEY,
        conversation_id uuid NOT NULL REFERENCES conversations.conversations (id) ON DELETE CASCADE,
        account_id      uuid NOT NULL,
        name            text,
        email           text,
        phone           text,
        created_at      timestamptz(3) NOT NULL
      )`);
    await db.query(`CREATE INDEX leads_account_created ON conversations.leads (account_id, created_at)`);
    await db.query(`CREATE INDEX leads_conversation ON conversations.leads (conversation_id)`);

    // Conversations per account and status, kept in the same transaction as every change, so a
    // list's total costs one row read however many conversations the account has.
    await db.query(`
      CREATE TABLE conversations.status_counts (
        account_id uuid NOT NULL,
        status     text NOT NULL,
        count      bigint NOT NULL CHECK (count >= 0),
        PRIMARY KEY (account_id, status)
      )`);

    await db.query(`
      CREATE TABLE conversations.outbox (
        id              bigserial PRIMARY KEY,
        event_id        uuid NOT NULL,
        account_id      uuid NOT NULL,
        conversation_id uuid NOT NULL,
        type            text NOT NULL,
        envelope        jsonb NOT NULL,
        created_at      timestamptz(3) NOT NULL DEFAULT now(),
        published_at    timestamptz(3)
      )`);
    await db.query(`CREATE INDEX outbox_unpublished ON conversations.outbox (id) WHERE published_at IS NULL`);
    // Wakes the relays on commit (NOTIFY is transactional), so events leave within milliseconds.
    await db.query(`
      CREATE FUNCTION conversations.notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('conversations_outbox', ''); RETURN NULL; END $$`);
    await db.query(`
      CREATE TRIGGER outbox_notify AFTER INSERT ON conversations.outbox
      FOR EACH STATEMENT EXECUTE FUNCTION conversations.notify_outbox()`);

    // One row per applied command: a redelivered command finds it and gets the stored reply.
    await db.query(`
      CREATE TABLE conversations.processed_commands (
        command_id  text PRIMARY KEY,
        account_id  uuid NOT NULL,
        pattern     text NOT NULL,
        response    jsonb,
        created_at  timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await db.query(
      // Only the hourly retention job reads it by time: BRIN costs next to nothing per insert.
      `CREATE INDEX processed_commands_created ON conversations.processed_commands USING brin (created_at)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    for (const table of [
      'processed_commands',
      'outbox',
      'status_counts',
      'leads',
      'messages',
      'conversations',
    ]) {
      await db.query(`DROP TABLE conversations.${table}`);
    }
    await db.query(`DROP FUNCTION conversations.notify_outbox()`);
  }
}
