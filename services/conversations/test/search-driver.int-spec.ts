import { randomUUID } from 'node:crypto';
import { ownConversationsDatabase } from './own-database';

/**
 * Migration 1766700000000: a search that falls back to an index reads it for one word of the
 * query, the one `search_driver` estimates the fewest messages and conversations hold, from the
 * statistics ANALYZE keeps of the indexes' expressions. Reading a common word's candidates instead
 * is the difference between milliseconds and seconds at a million conversations (BENCHMARKS.md,
 * "Search"). On a database of its own, so its statistics are this test's alone.
 */
describe('the word a search reads its index for', () => {
  const { db, open, close } = ownConversationsDatabase('search_driver');
  const driver = async (query: string) =>
    (
      await db.query<{ word: string }>(`SELECT conversations.search_driver($1::tsquery)::text AS word`, [
        query,
      ])
    ).rows[0].word;

  beforeAll(async () => {
    await open();
    // Statistics come from this test's ANALYZE only.
    for (const table of ['conversations', 'messages'])
      await db.query(`ALTER TABLE conversations.${table} SET (autovacuum_enabled = false)`);
    // 200 conversations, each subject with `conversation`; two messages of three in each with
    // `zamowienie`; `zolw` in one message of all.
    const account = randomUUID();
    await db.query(
      `INSERT INTO conversations.conversations (id, account_id, status, subject, metadata, created_at, updated_at, message_count)
       SELECT gen_random_uuid(), $1, 'active', 'Conversation ' || i, '{}', now(), now(), 3 FROM generate_series(1, 200) i`,
      [account],
    );
    await db.query(
      `INSERT INTO conversations.messages (id, conversation_id, account_id, position, sender, content, created_at)
       SELECT gen_random_uuid(), c.id, c.account_id, k, 'visitor',
              CASE WHEN k < 3 THEN 'Zamówienie ' || k ELSE 'Dzień dobry' END, now()
         FROM conversations.conversations c CROSS JOIN generate_series(1, 3) k WHERE c.account_id = $1`,
      [account],
    );
    await db.query(
      `UPDATE conversations.messages SET content = 'Żółw' WHERE id = (SELECT min(id::text)::uuid FROM conversations.messages)`,
    );
  });
  afterAll(close);

  it('is the longer word while there are no statistics, then the rarer one', async () => {
    expect(await driver('zamowienie:* & zolw:*')).toBe(`'zamowienie':*`);
    await db.query('ANALYZE conversations.messages');
    await db.query('ANALYZE conversations.conversations');
    // Common in messages, common in subjects, a prefix of a common word: each loses to `zolw`.
    expect(await driver('zamowienie:* & zolw:*')).toBe(`'zolw':*`);
    expect(await driver('zolw:* & conversation:*')).toBe(`'zolw':*`);
    expect(await driver('za:* & zolw:*')).toBe(`'zolw':*`);
    // Two words neither of which is common: the longer.
    expect(await driver('zolw:* & parcel:*')).toBe(`'parcel':*`);
  });

  it('keeps a quote or a backslash of a word as the query had it', async () => {
    expect(await driver(`'it''s':* & 'a\\\\b':*`)).toBe(`'it''s':*`);
    expect(await driver(`'a\\\\bcdef':*`)).toBe(`'a\\\\bcdef':*`);
  });
});
