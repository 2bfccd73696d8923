import { Client } from 'pg';

/**
 * Seeds one large account for the analytics benchmark: `conversations` conversations spread
 * evenly over the last `days` days, `messagesPerConversation` messages each (visitors, a bot, agents
 * and a system note, minutes apart), 70% closed within a day, a third with a lead. Straight into
 * the conversations schema in one statement per table: the analytics triggers build the rollups
 * as they would for any write, so the figures the endpoints read are the real ones.
 */
export async function seedAnalyticsAccount(
  databaseUrl: string,
  accountId: string,
  conversations: number,
  messagesPerConversation: number,
  days = 365,
): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('BEGIN');
    await db.query(
      `INSERT INTO conversations.conversations
         (id, account_id, status, subject, metadata, message_count, last_message_at, created_at, updated_at, closed_at)
       SELECT gen_random_uuid(), $1::uuid, s.status, 'Analytics seed ' || i, '{}'::jsonb, $3::int, t.started,
              t.started, t.started, CASE WHEN s.status = 'closed' THEN t.started + make_interval(secs => 600 + (i * 7919) % 86400) END
         FROM generate_series(0::bigint, $2::bigint - 1) AS i,
              LATERAL (SELECT date_trunc('milliseconds', now() - make_interval(days => $4::int)
                                + make_interval(secs => i * ($4::int * 86400.0 / $2::int) + (i * 104729) % 300)) AS started) t,
              LATERAL (SELECT CASE WHEN i % 10 < 7 THEN 'closed' WHEN i % 10 < 9 THEN 'active' ELSE 'pending' END AS status) s`,
      [accountId, conversations, messagesPerConversation, days],
    );
    await db.query(
      `INSERT INTO conversations.messages (id, conversation_id, account_id, position, sender, content, created_at)
       SELECT gen_random_uuid(), c.id, c.account_id, k,
              (ARRAY['visitor', 'bot', 'visitor', 'agent', 'visitor', 'agent', 'visitor', 'agent', 'system', 'visitor'])[1 + (k - 1) % 10],
              'Message ' || k || ': lorem ipsum dolor sit amet, consectetur adipiscing elit.',
              c.created_at + make_interval(secs => k * 180 + (k * 7 + length(c.subject)) % 120)
         FROM conversations.conversations c CROSS JOIN generate_series(1, $2::int) AS k
        WHERE c.account_id = $1`,
      [accountId, messagesPerConversation],
    );
    await db.query(
      `INSERT INTO conversations.leads (id, conversation_id, account_id, email, created_at)
       SELECT gen_random_uuid(), id, account_id, 'visitor@example.com', created_at + interval '7 minutes'
         FROM conversations.conversations WHERE account_id = $1 AND hashtext(id::text) % 3 = 0`,
      [accountId],
    );
    await db.query(
      `INSERT INTO conversations.status_counts (account_id, status, count)
       SELECT account_id, status, count(*) FROM conversations.conversations WHERE account_id = $1 GROUP BY 1, 2
       ON CONFLICT (account_id, status) DO UPDATE SET count = EXCLUDED.count`,
      [accountId],
    );
    await db.query('COMMIT');
    for (const table of [
      'conversations',
      'messages',
      'leads',
      'analytics_slots',
      'analytics_closures',
      'analytics_first_responses',
    ]) {
      await db.query(`VACUUM ANALYZE conversations.${table}`);
    }
  } catch (error) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await db.end();
  }
}
