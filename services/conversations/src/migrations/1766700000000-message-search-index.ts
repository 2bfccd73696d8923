import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search's index moves from the conversation's words to each message's (docs/conversations.md,
 * "Search and tags"; BENCHMARKS.md, "Search" has the figures). With every word of a conversation
 * GIN-indexed on its row, a message bringing a new word made the conversation's update a regular
 * one instead of HOT (an entry in each of its indexes) and put every word of the conversation into
 * the GIN index again: the cost grew with the conversation, and was most of what searching added
 * to sending a message.
 *
 * Now a message's words are indexed with the message (`messages_account_words`, only its own words
 * written), the subject's and visitor's with the conversation (`conversations_account_detail_words`,
 * written when those change), and `search_words` stays on the row unindexed: a list checks it on
 * the rows it walks and on the candidates these indexes give, so words split between a subject and
 * a message, or between messages, still match. `search_candidates` picks which word of a query
 * the indexes look up: the rarest by the statistics ANALYZE keeps of the messages' words.
 *
 * Expand, then contract the index of conversations' words, which no release reads (it came after
 * v1.0.0). Indexes are built CONCURRENTLY (outside a transaction), an invalid one left by an
 * interrupted deploy built again.
 */
export class MessageSearchIndex1766700000000 implements MigrationInterface {
  name = 'MessageSearchIndex1766700000000';
  transaction = false as const;

  async up(db: QueryRunner): Promise<void> {
    await buildIndex(
      db,
      'messages_account_words',
      `conversations.messages USING gin (account_id, conversations.words_of(content))`,
    );
    await buildIndex(
      db,
      'conversations_account_detail_words',
      `conversations.conversations
         USING gin (account_id, conversations.detail_search_words(subject, visitor_name, visitor_email))`,
    );
    // The word of a query whose prefix the fewest rows of the two indexes hold, as estimated from
    // the statistics ANALYZE keeps of their expressions: the most common words' shares of their
    // table's rows, summed over the words the prefix starts; a word among none of them is rare.
    // Ties go to the longer word. Only a choice of which index entries to read: any word is correct.
    await db.query(`
      CREATE OR REPLACE FUNCTION conversations.search_driver(query tsquery) RETURNS tsquery
        LANGUAGE sql STABLE PARALLEL SAFE STRICT
        RETURN (
          WITH common AS (
            SELECT e.word, e.share * greatest(t.reltuples, 0) AS rows
              FROM pg_catalog.pg_stats s
              JOIN pg_catalog.pg_index x ON x.indexrelid = format('%I.%I', s.schemaname, s.tablename)::regclass
              JOIN pg_catalog.pg_class t ON t.oid = x.indrelid,
                   unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(word, share)
             WHERE s.schemaname = 'conversations' AND e.word IS NOT NULL
               AND (s.tablename, s.attname) IN (('messages_account_words', 'words_of'),
                                                ('conversations_account_detail_words', 'detail_search_words')))
          SELECT ('''' || replace(replace(word, '\\', '\\\\'), '''', '''''') || ''':*')::tsquery
            FROM (SELECT regexp_replace(regexp_replace(m[1], '\\\\(.)', '\\1', 'g'), '''''', '''', 'g') AS word
                    FROM regexp_matches(query::text, '''((?:[^''\\\\]|''''|\\\\.)*)'':\\*', 'g') AS m) words
           ORDER BY (SELECT COALESCE(sum(common.rows), 0) FROM common WHERE starts_with(common.word, words.word)),
                    char_length(word) DESC, word
           LIMIT 1)`);
    await db.query(`DROP INDEX CONCURRENTLY IF EXISTS conversations.conversations_account_search`);
  }

  async down(db: QueryRunner): Promise<void> {
    await buildIndex(
      db,
      'conversations_account_search',
      `conversations.conversations USING gin (account_id, search_words)`,
    );
    await db.query(`DROP FUNCTION IF EXISTS conversations.search_driver(tsquery)`);
    await db.query(`DROP INDEX CONCURRENTLY IF EXISTS conversations.conversations_account_detail_words`);
    await db.query(`DROP INDEX CONCURRENTLY IF EXISTS conversations.messages_account_words`);
  }
}

/** Builds index `name` ON `definition` CONCURRENTLY unless a valid one is there (an invalid one is dropped first). */
async function buildIndex(db: QueryRunner, name: string, definition: string): Promise<void> {
  const [{ valid }] = (await db.query(
    `SELECT bool_and(i.indisvalid) AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`,
    [`conversations.${name}`],
  )) as Array<{ valid: boolean | null }>;
  if (valid) return;
  await db.query(`DROP INDEX CONCURRENTLY IF EXISTS conversations.${name}`);
  await db.query(`CREATE INDEX CONCURRENTLY ${name} ON ${definition}`);
}
