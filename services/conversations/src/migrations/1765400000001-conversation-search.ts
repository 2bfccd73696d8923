import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search (docs/conversations.md, "Search and tags"): each conversation keeps `search_words`, the
 * words of its subject, its visitor's name and email and all its messages, folded (unaccent,
 * lower case, a hyphen splits words) and stripped of positions: one tsvector of distinct words,
 * indexed by a GIN index of the account with its words, so `q` reads only its account's matches.
 * Sending a message adds its words to the row it updates anyway; an edit of the subject or the
 * visitor computes the words again. BENCHMARKS.md, "Search", has the alternatives measured.
 *
 * `unaccent` is a contrib extension Postgres marks trusted (docs/operations.md, "Database
 * privileges"); its functions are referenced in the schema it lives in, looked up here, so one an
 * operator installed elsewhere serves too. The folding functions are IMMUTABLE (unaccent with its
 * dictionary named is, as long as its rules file does not change), which an index needs.
 *
 * Expand only, runnable again after an interrupted deploy: the column has a constant default, the
 * backfill fills rows still empty, the index is built CONCURRENTLY (outside a transaction).
 */
export class ConversationSearch1765400000001 implements MigrationInterface {
  name = 'ConversationSearch1765400000001';
  transaction = false as const;

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE EXTENSION IF NOT EXISTS unaccent`);
    const [{ schema }] = (await db.query(
      `SELECT quote_ident(extnamespace::regnamespace::text) AS schema FROM pg_extension WHERE extname = 'unaccent'`,
    )) as Array<{ schema: string }>;
    await db.query(`
      CREATE OR REPLACE FUNCTION conversations.words_of(text) RETURNS tsvector
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        RETURN strip(to_tsvector('pg_catalog.simple'::regconfig,
                                 translate(lower(${schema}.unaccent('${schema}.unaccent'::regdictionary, $1)), '-', ' ')))`);
    await db.query(`
      CREATE OR REPLACE FUNCTION conversations.detail_search_words(subject text, name text, email text)
        RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN conversations.words_of(concat_ws(' ', subject, name, email, replace(email, '@', ' ')))`);
    // Words stop being added to a conversation holding 50,000 distinct ones (a tsvector holds 1 MB).
    await db.query(`
      CREATE OR REPLACE FUNCTION conversations.with_message_words(words tsvector, content text)
        RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN CASE WHEN length(words) < 50000 THEN words || conversations.words_of(content) ELSE words END`);
    await db.query(`
      CREATE OR REPLACE FUNCTION conversations.conversation_search_words(conversation uuid, subject text, name text, email text)
        RETURNS tsvector LANGUAGE sql STABLE PARALLEL SAFE
        RETURN conversations.detail_search_words(subject, name, email)
               || COALESCE((SELECT conversations.words_of(string_agg(m.content, ' '))
                              FROM conversations.messages m WHERE m.conversation_id = conversation), '')`);
    // Every word of a query of at least min_length characters, as a prefix, all required; NULL for none.
    await db.query(`
      CREATE OR REPLACE FUNCTION conversations.search_query(query text, min_length int) RETURNS tsquery
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        RETURN (SELECT string_agg('''' || replace(replace(word, '\\', '\\\\'), '''', '''''') || ''':*', ' & ')::tsquery
                  FROM unnest(tsvector_to_array(conversations.words_of(query))) word
                 WHERE char_length(word) >= min_length)`);
    await db.query(
      `ALTER TABLE conversations.conversations ADD COLUMN IF NOT EXISTS search_words tsvector NOT NULL DEFAULT ''`,
    );
    // In batches along the primary key, each well within the statement timeout.
    for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
      const [batch] = (await db.query(
        `WITH batch AS (SELECT id FROM conversations.conversations WHERE id > $1 ORDER BY id LIMIT 2000),
              filled AS (UPDATE conversations.conversations c
                            SET search_words = conversations.conversation_search_words(c.id, c.subject, c.visitor_name, c.visitor_email)
                           FROM batch WHERE c.id = batch.id AND c.search_words = '')
         SELECT max(id::text) AS last FROM batch`,
        [after],
      )) as Array<{ last: string | null }>;
      if (batch.last === null) break;
      after = batch.last;
    }
    await db.query(`DROP INDEX CONCURRENTLY IF EXISTS conversations.conversations_account_search`);
    await db.query(
      `CREATE INDEX CONCURRENTLY conversations_account_search ON conversations.conversations USING gin (account_id, search_words)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX CONCURRENTLY IF EXISTS conversations.conversations_account_search`);
    await db.query(`ALTER TABLE conversations.conversations DROP COLUMN IF EXISTS search_words`);
    for (const fn of [
      'search_query(text, int)',
      'conversation_search_words(uuid, text, text, text)',
      'with_message_words(tsvector, text)',
      'detail_search_words(text, text, text)',
      'words_of(text)',
    ])
      await db.query(`DROP FUNCTION IF EXISTS conversations.${fn}`);
  }
}
