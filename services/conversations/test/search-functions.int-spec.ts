import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SearchFunctionsPlpgsql1767000000000 } from '../src/migrations/1767000000000-search-functions-plpgsql';
import { conversationsDataSourceOptions } from '../src/data-source';
import { ownConversationsDatabase } from './own-database';

/**
 * Migration 1767000000000: search's functions that Postgres cannot inline run as PL/pgSQL, which
 * keeps their plans for the session, with the bodies they had. Two indexes are built on two of
 * them, so what they return must not change, whatever search_path the caller has.
 */
describe('search functions in PL/pgSQL', () => {
  const { db, url, open, close } = ownConversationsDatabase('search_functions');
  const migration = new SearchFunctionsPlpgsql1767000000000();
  let dataSource: DataSource;

  const languages = async () =>
    (
      await db.query<{ name: string; language: string }>(
        `SELECT p.proname AS name, l.lanname AS language FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
          WHERE p.pronamespace = 'conversations'::regnamespace
            AND p.proname IN ('words_of', 'detail_search_words', 'conversation_search_words', 'search_query', 'search_driver')
          ORDER BY p.proname`,
      )
    ).rows;
  const conversation = randomUUID();
  /** What each function returns for text with diacritics, a hyphen, an email and a quote. */
  const results = async () =>
    (
      await db.query(
        `SELECT conversations.words_of('Żółw-Zamówienie ĄĘ') AS words,
                conversations.detail_search_words('Paczka 1001', 'Łucja', 'lucja@example.pl') AS details,
                conversations.conversation_search_words($1, 'Paczka', NULL, NULL) AS conversation,
                conversations.search_query('żółw it''s a', 2)::text AS query,
                conversations.search_driver('zolw:* & zamowienie:*'::tsquery)::text AS driver`,
        [conversation],
      )
    ).rows[0];
  /** Runs the migration's `up` or `down` in a transaction of its own, as the migration runner does. */
  const run = async (step: 'up' | 'down') => {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await migration[step](runner);
      await runner.commitTransaction();
    } catch (error) {
      await runner.rollbackTransaction();
      throw error;
    } finally {
      await runner.release();
    }
  };

  beforeAll(async () => {
    await open();
    // A conversation whose words include its messages' (conversation_search_words reads them).
    const account = randomUUID();
    await db.query(
      `INSERT INTO conversations.conversations (id, account_id, status, metadata, created_at, updated_at, message_count)
       VALUES ($1, $2, 'active', '{}', now(), now(), 2)`,
      [conversation, account],
    );
    await db.query(
      `INSERT INTO conversations.messages (id, conversation_id, account_id, position, sender, content, created_at)
       SELECT gen_random_uuid(), $1, $2, k, 'visitor', content, now()
         FROM (VALUES (1, 'Dzień dobry'), (2, 'Gdzie jest żółw?')) AS m(k, content)`,
      [conversation, account],
    );
    dataSource = await new DataSource(
      conversationsDataSourceOptions({ DATABASE_URL: url, DATABASE_POOL_SIZE: 1 }),
    ).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await close();
  });

  it('are PL/pgSQL after the migration, SQL after its down, and return the same either way', async () => {
    expect(await languages()).toEqual(
      ['conversation_search_words', 'detail_search_words', 'search_driver', 'search_query', 'words_of'].map(
        (name) => ({ name, language: 'plpgsql' }),
      ),
    );
    const migrated = await results();
    expect(migrated).toEqual({
      words: `'ae' 'zamowienie' 'zolw'`,
      details: `'1001' 'example.pl' 'lucja' 'lucja@example.pl' 'paczka'`,
      conversation: `'dobry' 'dzien' 'gdzie' 'jest' 'paczka' 'zolw'`,
      query: `'it':* & 'zolw':*`,
      driver: `'zamowienie':*`,
    });

    await run('down');
    expect((await languages()).map((row) => row.language)).toEqual(Array(5).fill('sql'));
    expect(await results()).toEqual(migrated);

    await run('up');
    expect((await languages()).map((row) => row.language)).toEqual(Array(5).fill('plpgsql'));
    expect(await results()).toEqual(migrated);
  });

  it('resolve every name they use by its schema, not by the caller’s search_path', async () => {
    const expected = await results();
    await db.query(`CREATE SCHEMA IF NOT EXISTS decoy`);
    await db.query(
      `CREATE OR REPLACE FUNCTION decoy.unaccent(regdictionary, text) RETURNS text LANGUAGE sql RETURN 'decoy'`,
    );
    try {
      for (const path of [`''`, 'decoy, public', 'pg_catalog']) {
        await db.query(`SET search_path TO ${path}`);
        expect(await results()).toEqual(expected);
      }
    } finally {
      await db.query('RESET search_path');
      await db.query('DROP SCHEMA decoy CASCADE');
    }
  });

  it('still match the expressions of the indexes built on them', async () => {
    await db.query('SET enable_seqscan TO off'); // an empty table: only a matching index avoids the scan
    const plan = (
      await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM conversations.messages m WHERE conversations.words_of(m.content) @@ 'zolw:*'::tsquery`,
      )
    ).rows
      .map((row) => row['QUERY PLAN'])
      .join('\n');
    await db.query('RESET enable_seqscan');
    expect(plan).toContain('messages_account_words');
  });

  it('refuses to run outside a transaction, where the empty search_path would not hold', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      await expect(migration.up(runner)).rejects.toThrow('must run in a transaction');
    } finally {
      await runner.release();
    }
    expect((await languages()).map((row) => row.language)).toEqual(Array(5).fill('plpgsql'));
  });
});
